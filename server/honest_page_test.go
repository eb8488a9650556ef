package server

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
)

// TestBrowserCouldNotCheck: with GitHub unreachable, checking for updates
// shows an amber "could not check" panel naming the plugin and why, never
// the green "Up to date"; once GitHub answers again, Check again says up
// to date.
func TestBrowserCouldNotCheck(t *testing.T) {
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", toolsFiles("1.0.0"))
	extra := map[string]string{".claude-plugin/plugin.json": `{"name":"extra","version":"1.0.0"}`, "skills/x/SKILL.md": "---\nname: x\ndescription: x\n---\nx\n"}
	gh.CreateRepo("acme", "extra").Commit("main", extra)
	e := newEnv(t, envOpts{gh: gh})
	plan := e.plan(installer.Request{Source: mustSource("https://github.com/acme/tools")})
	if r := e.installByPlanID(plan.PlanID); r.status != 200 {
		t.Fatalf("install: %d %s", r.status, r.body)
	}
	e.plan(installer.Request{Source: mustSource("https://github.com/acme/extra")}) // cached, not installed
	p := newTab(t, e)
	p.signIn()
	p.showInstalled()

	gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Status: 503})
	p.click("#update-all")
	p.until("the review", `!!document.getElementById("installed-update")`)
	if got := eval[string](p, `document.getElementById("installed-update").dataset.status`); got != "unchecked" {
		t.Errorf("the review's status is %q, want unchecked", got)
	}
	p.visible("#installed-unchecked")
	note := p.text("#installed-unchecked")
	for _, want := range []string{"Could not check 1 plugin (network)", "tools", "cached"} {
		if !strings.Contains(note, want) {
			t.Errorf("the could-not-check panel lacks %q: %q", want, note)
		}
	}
	if n := eval[int](p, `document.querySelectorAll("#installed-uptodate, #installed-update.uptodate").length`); n != 0 {
		t.Errorf("an unchecked review says up to date: %s", p.text("#installed-update"))
	}
	// Amber: the warning colours, not the green of "up to date".
	bg := eval[string](p, `getComputedStyle(document.getElementById("installed-unchecked")).backgroundColor`)
	warn := eval[string](p, `(() => { const d = document.createElement("div"); d.style.background = "var(--warn-bg)"; document.body.append(d);
		const c = getComputedStyle(d).backgroundColor; d.remove(); return c; })()`)
	if bg != warn {
		t.Errorf("the panel's background is %s, want the amber %s", bg, warn)
	}
	if got := p.text("#installed-progress-text"); strings.HasPrefix(got, "Up to date") {
		t.Errorf("the progress line says %q", got)
	}
	p.noFlags("for sources that could not be checked")
	p.shot("could-not-check")

	// A plan on the Add screen says the same, amber, and offers to plan
	// from the cache on purpose, which then installs.
	p.click(`#tabs a[data-screen="add"]`)
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), "https://github.com/acme/extra"))
	p.click("#plan-button")
	p.visible("#plan-unchecked")
	if got := p.text("#plan-unchecked"); !strings.Contains(got, "Could not check 1 plugin (network)") || !strings.Contains(got, "extra") {
		t.Errorf("the plan's could-not-check note: %q", got)
	}
	if !eval[bool](p, `document.getElementById("install-button").disabled`) {
		t.Error("Install is enabled for a plan that could not be checked")
	}
	p.noFlags("for a plan that could not be checked")
	p.shot("could-not-check-plan")
	p.click(`#plan-fixes button[data-action="offline"]`)
	p.until("the plan from the cache", `document.getElementById("plan-asked")?.textContent.includes("offline") && !document.getElementById("install-button").disabled`)
	p.click("#install-button")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)
	if _, ok := e.installed()["extra"]; !ok {
		t.Fatal("extra was not installed from the cache")
	}

	gh.ClearFaults()
	p.showInstalled()
	p.click(`#installed-unchecked button[data-action="check-again"]`)
	p.until("the checked review", `!!document.getElementById("installed-uptodate")`)
	if n := eval[int](p, `document.querySelectorAll("#installed-unchecked").length`); n != 0 {
		t.Errorf("a checked review still says it could not check: %s", p.text("#installed-update"))
	}
}

// TestBrowserProgressNamesTheHost: planning a single repository shows live
// progress — the seconds counting, and, when the host stops answering, its
// name as soon as the daemon notices — then how it ended.
func TestBrowserProgressNamesTheHost(t *testing.T) {
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "slow").Commit("main", toolsFiles("1.0.0"))
	e := newEnv(t, envOpts{gh: gh})
	p := newTab(t, e)
	p.signIn()
	host := strings.TrimPrefix(gh.URL, "http://")

	// The host accepts the request and says nothing for a while.
	gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Stall: 6 * time.Second, Times: 1})
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), "https://github.com/acme/slow"))
	p.click("#plan-button")
	p.until("the stall named", `document.getElementById("add-progress").classList.contains("stalled")`)
	line := p.text("#add-progress-text")
	if !strings.Contains(line, "no answer from "+host) || !strings.Contains(line, "gives up at") {
		t.Errorf("the stalled progress line: %q", line)
	}
	if !strings.Contains(line, " s)") {
		t.Errorf("the progress line does not count the seconds: %q", line)
	}
	p.shot("progress-stalled")
	p.visible(`#plan-cards article[data-name="tools"]`)
	p.until("the summary", `document.getElementById("add-progress").classList.contains("finished")`)
	// A single repository says what it fetched, as a marketplace does.
	if got := p.text("#add-progress-text"); !strings.HasPrefix(got, "Plan ready in ") || !strings.Contains(got, "fetched from "+host) {
		t.Errorf("the progress summary: %q", got)
	}
	if eval[bool](p, `document.getElementById("add-progress").classList.contains("stalled")`) {
		t.Error("the finished progress line still says it is stalled")
	}
}

// TestBrowserProgressWithoutNews: when the daemon reports nothing for a
// while (a host that never answers the connection), the page says what it
// waits on by the source's host, not a frozen "Planning…".
func TestBrowserProgressWithoutNews(t *testing.T) {
	e := newEnv(t, envOpts{github: "http://127.0.0.1:9", timeout: 200 * time.Millisecond})
	p := newTab(t, e)
	p.signIn()
	p.do(chromedp.Evaluate[chromedp.Void](`(() => {
		// The daemon's answer is held back, as a host that accepts and
		// never answers would hold it: the page has only its clock.
		const real = window.fetch;
		window.fetch = (url, init) => String(url).includes("/plugins/plan") ? new Promise((r) => setTimeout(() => r(real(url, init)), 7000)) : real(url, init);
	})()`))
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), "git:github.com/acme/quiet"))
	p.click("#plan-button")
	p.until("the wait named", `document.getElementById("add-progress-text").textContent.includes("waiting on github.com")`)
	p.shot("progress-no-news")
	p.until("the answer", `!document.getElementById("add-notice").hidden`)
}

// TestBrowserMarketplaceCouldNotCheck: updating a known marketplace whose
// host cannot be reached says so, amber, rather than "unchanged".
func TestBrowserMarketplaceCouldNotCheck(t *testing.T) {
	fx := newMarketFixture(t)
	e := newEnv(t, envOpts{gh: fx.gh})
	if r := e.do("POST", "/marketplaces", map[string]any{"source": fx.source}, nil); r.status != 200 {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	p := newTab(t, e)
	p.signIn()
	p.showMarketplaces()
	fx.gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Status: 503})
	p.click(`#markets-list article[data-name="acme-tools"] button[data-action="update-market"]`)
	p.visible("#market-unchecked")
	if got := p.text("#markets-notice"); !strings.Contains(got, "Could not check acme-tools (network)") || strings.Contains(got, "unchanged") {
		t.Errorf("the notice: %q", got)
	}
	if !eval[bool](p, `document.getElementById("markets-notice").classList.contains("warn")`) {
		t.Error("the notice is not amber")
	}
	p.noFlags("for a marketplace that could not be checked")
	fx.gh.ClearFaults()
	p.click(`#markets-list article[data-name="acme-tools"] button[data-action="update-market"]`)
	p.until("the checked update", `document.getElementById("markets-notice").textContent.includes("unchanged")`)
}
