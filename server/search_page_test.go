package server

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"reasonix.io/plugind/installer"
)

// searchFor types q into the search box (replacing what was there) and
// waits for the results of exactly q.
func (p *tab) searchFor(q string) {
	p.t.Helper()
	p.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("search").value = ""`), chromedp.SendKeys(chromedp.CSS("#search"), q))
	p.until("the results for "+q, `document.getElementById("search-summary").textContent.includes(`+jsString("“"+q+"”")+`)`)
}

func (p *tab) resultNames(list string) []string {
	p.t.Helper()
	return eval[[]string](p, `Array.from(document.querySelectorAll("#`+list+` li")).map((l) => l.dataset.name + (l.dataset.market ? "@" + l.dataset.market : ""))`)
}

// TestBrowserSearch: the search box finds installed plugins (by name,
// description or what they contribute) and the entries of known
// marketplaces, and each result leads somewhere: an installed one to its
// row, an installable entry to the review of its install.
func TestBrowserSearch(t *testing.T) {
	fx := newMarketFixture(t)
	e := newEnv(t, envOpts{gh: fx.gh})
	if r := e.do("POST", "/marketplaces", map[string]any{"source": fx.source}, nil); r.status != 200 {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	plan := e.plan(installer.Request{Source: mustSource("alpha@acme-tools")})
	if r := e.installByPlanID(plan.PlanID); r.status != 200 {
		t.Fatalf("install alpha: %d %s", r.status, r.body)
	}
	p := newTab(t, e)
	p.signIn()

	// "greet" is alpha's skill: found among the installed.
	p.searchFor("greet")
	p.visible("#screen-search")
	if got := strings.Join(p.resultNames("search-installed-list"), ","); got != "alpha" {
		t.Errorf("installed results for greet: %s", got)
	}
	// "alpha" is installed, and offered by acme-tools.
	p.searchFor("alpha")
	if got := strings.Join(p.resultNames("search-installed-list"), ","); got != "alpha" {
		t.Errorf("installed results for alpha: %s", got)
	}
	if got := strings.Join(p.resultNames("search-market-list"), ","); got != "alpha@acme-tools" {
		t.Errorf("marketplace results for alpha: %s", got)
	}
	if got := p.text(`#search-market-list li[data-name="alpha"]`); !strings.Contains(got, "installed") {
		t.Errorf("the installed entry: %q", got)
	}
	p.shot("search-alpha")

	// Two words narrow (the marketplace's name counts); case does not
	// matter.
	p.searchFor("ACME Beta")
	if got := strings.Join(p.resultNames("search-market-list"), ","); got != "beta@acme-tools" {
		t.Errorf("results for ACME Beta: %s", got)
	}
	if !eval[bool](p, `document.getElementById("search-installed").hidden`) {
		t.Errorf("installed results for beta: %s", p.text("#search-installed"))
	}
	p.searchFor("zebra")
	if got := p.text("#search-summary"); !strings.Contains(got, "Nothing installed or offered") {
		t.Errorf("no results: %q", got)
	}

	// An installable entry leads to the review of its install.
	p.searchFor("beta")
	p.click(`#search-market-list li[data-name="beta"] button[data-action="review-install"]`)
	p.visible("#screen-add")
	p.visible(`#plan-cards article[data-name="beta"]`)
	if got := p.text("#install-button"); got != "Install and trust beta" {
		t.Errorf("the review from a search result: %q", got)
	}

	// An installed one leads to its row, opened.
	p.searchFor("alpha")
	p.click(`#search-installed-list li[data-name="alpha"] button[data-action="show-installed"]`)
	p.visible(`#installed-list article[data-name="alpha"] .prow-body`)
}

// contrastJS is the contrast ratio (WCAG) of the text of each element
// that sel matches against the background it is drawn on, lowest first.
const contrastJS = `((sels) => {
	const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
	const lum = ([r, g, b]) => {
		const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
	};
	const bgOf = (el) => {
		for (let e = el; e; e = e.parentElement) {
			const c = rgb(getComputedStyle(e).backgroundColor);
			if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
		}
		return [255, 255, 255];
	};
	const out = [];
	for (const sel of sels) {
		for (const el of document.querySelectorAll(sel)) {
			if (!el.offsetParent && el !== document.body) continue;
			const a = lum(rgb(getComputedStyle(el).color).slice(0, 3)), b = lum(bgOf(el));
			out.push({sel, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)});
		}
	}
	return out.sort((x, y) => x.ratio - y.ratio);
})`

type contrast struct {
	Sel   string  `json:"sel"`
	Ratio float64 `json:"ratio"`
}

// TestBrowserDarkTheme: the page follows the system's theme. Dark, its
// background is dark and its text light; in both themes every kind of
// text on the plan (facts, badges, the FULL TRUST block, buttons, hints)
// keeps a contrast of at least 4.5:1.
func TestBrowserDarkTheme(t *testing.T) {
	fx := newMarketFixture(t)
	e := newEnv(t, envOpts{gh: fx.gh})
	p := newTab(t, e)
	p.signIn()
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), fx.source))
	p.click("#plan-button")
	p.visible(`#plan-cards article[data-name="beta"]`)
	sels := `["body", ".plan-head dd", ".plan-head dt", "#plan-id", ".badge", ".fulltrust p", ".fulltrust dd", ".fulltrust code", "#install-button",
		"#plan-button", ".hint", ".meta", ".reason", "#tabs a", "#source", "details.items summary", ".counts"]`
	for _, scheme := range []string{"light", "dark"} {
		if _, err := chromedp.Call(p.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		}); err != nil {
			t.Fatalf("emulate %s: %v", scheme, err)
		}
		dark := eval[bool](p, `matchMedia("(prefers-color-scheme: dark)").matches`)
		if dark != (scheme == "dark") {
			t.Fatalf("%s: the page sees dark = %v", scheme, dark)
		}
		bg := eval[[]float64](p, `(getComputedStyle(document.body).backgroundColor.match(/[\d.]+/g) || []).map(Number)`)
		if len(bg) < 3 || (scheme == "dark") != (bg[0]+bg[1]+bg[2] < 3*80) {
			t.Errorf("%s: the page's background is %v", scheme, bg)
		}
		cs := eval[[]contrast](p, contrastJS+`(`+sels+`)`)
		if len(cs) < 20 {
			t.Fatalf("%s: only %d elements measured", scheme, len(cs))
		}
		for _, c := range cs {
			if c.Ratio < 4.5 {
				t.Errorf("%s: %s has a contrast of %.2f:1", scheme, c.Sel, c.Ratio)
			}
		}
		p.shot("theme-" + scheme)
	}
}
