package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// alphaGuardFiles is alpha at version with one more hook: a SessionStart
// command, which makes approving the update riskier than what is installed.
func alphaGuardFiles(version string) map[string]string {
	files := map[string]string{}
	for k, v := range alphaFiles(version) {
		files["plugins/alpha/"+k] = v
	}
	files["plugins/alpha/hooks/hooks.json"] = `{"hooks":{` +
		`"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh"}]}],` +
		`"SessionStart":[{"hooks":[{"type":"command","command":"${CLAUDE_PLUGIN_ROOT}/scripts/phone-home.sh"}]}]}}`
	return files
}

// TestBrowserMarketplacesScreen: a marketplace from the fake GitHub is
// added on the Marketplaces screen, browsed, and a narrowed selection of it
// installed with one review. The marketplace then moves (alpha gains a
// hook); Update reads it again, its browse list marks the update, and alpha
// is updated from the Installed screen with the diff on screen and a raised
// risk. A second move is updated in bulk from the Marketplaces screen, one
// review for all of the marketplace's plugins.
func TestBrowserMarketplacesScreen(t *testing.T) {
	fx := newMarketFixture(t)
	e := newEnv(t, envOpts{gh: fx.gh})
	p := newTab(t, e)
	p.signIn()
	first := fx.market.Head("main")

	p.showMarketplaces()
	p.visible("#markets-empty")
	p.shot("markets-empty")

	// Add it: it is known, with its commit and age, and nothing installed.
	p.do(chromedp.SendKeys(chromedp.CSS("#market-source"), fx.source+"\n"))
	p.visible(`#markets-list article[data-name="acme-tools"] .prow-body`)
	if got := p.text("#markets-notice"); !strings.Contains(got, "Added acme-tools at commit "+first[:12]) || !strings.Contains(got, "4 plugins") {
		t.Errorf("notice after adding: %q", got)
	}
	head := p.text(`#markets-list article[data-name="acme-tools"] .prow-head`)
	for _, want := range []string{"acme-tools", "4 plugins", fx.source, "commit " + first[:12], "read just now"} {
		if !strings.Contains(head, want) {
			t.Errorf("the marketplace row lacks %q: %q", want, head)
		}
	}
	if len(e.installed()) != 0 {
		t.Fatal("adding a marketplace installed something")
	}

	// Browse: every entry, the unpinnable one with its reason; the
	// installable ones have checkboxes, none picked yet.
	entries := eval[[]string](p, `Array.from(document.querySelectorAll('#markets-list li.entry')).map(li => li.dataset.name)`)
	if strings.Join(entries, ",") != "alpha,beta,gamma,npm-one" {
		t.Fatalf("entries: %v", entries)
	}
	if got := p.text(`li.entry[data-name="npm-one"]`); !strings.Contains(got, "skipped") || !strings.Contains(got, "npm") {
		t.Errorf("npm-one: %q", got)
	}
	if n := eval[int](p, `document.querySelectorAll('#markets-list li.entry input[type=checkbox]').length`); n != 3 {
		t.Errorf("%d checkboxes, want one per installable entry (3)", n)
	}
	if !eval[bool](p, `document.querySelector('button[data-action="review-install"]').disabled`) {
		t.Error("Review install is enabled with nothing picked")
	}
	p.shot("markets-browse")

	// Pick alpha and gamma (keyboard on one, mouse on the other): one plan
	// of exactly those, reviewed and installed on the Add screen.
	p.do(chromedp.Focus(chromedp.CSS(`li.entry[data-name="alpha"] input`)), chromedp.KeyEvent(" "))
	p.until("alpha picked", `document.querySelector('li.entry[data-name="alpha"] input').checked`)
	p.click(`li.entry[data-name="gamma"] input`)
	if got := p.text(`button[data-action="review-install"]`); got != "Review install of 2 plugins" {
		t.Fatalf("review button: %q", got)
	}
	p.shot("markets-picked")
	p.click(`button[data-action="review-install"]`)
	p.visible("#screen-add")
	p.visible(`#plan-cards article[data-name="gamma"]`)
	cards := eval[[]string](p, `Array.from(document.querySelectorAll("#plan-cards article")).map(a => a.dataset.name)`)
	if strings.Join(cards, ",") != "alpha,gamma" {
		t.Fatalf("the review of the picked plugins shows %v", cards)
	}
	if got := p.text("#plan-selected"); got != "alpha, gamma" {
		t.Errorf("the plan does not say it is narrowed: %q", got)
	}
	if got := eval[string](p, `document.getElementById("source").value`); got != "acme-tools" {
		t.Errorf("the source field says %q, want the marketplace's name", got)
	}
	sp, ok, err := e.in.StoredPlan(context.Background(), p.text("#plan-id"))
	// The request is kept as asked (the marketplace's name), and what it
	// read as is the plan's source.
	if err != nil || !ok || strings.Join(sp.Request.Names, ",") != "alpha,gamma" || sp.Request.Source.String() != "acme-tools" || sp.Response.Source != fx.source {
		t.Fatalf("the plan shown is not the picked one: %v %v %+v", ok, err, sp)
	}
	p.shot("markets-install-review")
	p.click("#install-button")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)
	got := e.installed()
	if len(got) != 2 || got["alpha"].MarketplaceName != "acme-tools" || got["gamma"].MarketplaceName != "acme-tools" {
		t.Fatalf("installed: %+v", got)
	}

	// Back on the Marketplaces screen: the installed ones are marked.
	p.click(`#install-result a[href="#marketplaces"]`)
	p.visible(`li.entry[data-name="alpha"] .badge.on`)
	if got := p.text(`#markets-list article[data-name="acme-tools"] .prow-head`); !strings.Contains(got, "2 installed") {
		t.Errorf("the row does not count the installed plugins: %q", got)
	}
	if n := eval[int](p, `document.querySelectorAll('#markets-list li.entry input[type=checkbox]').length`); n != 1 {
		t.Errorf("%d checkboxes after the install, want beta's alone", n)
	}

	// The marketplace moves: alpha gains a hook. Nothing shows it until
	// the marketplace is read again.
	moved := fx.market.Commit("main", alphaGuardFiles("1.1.0"))
	p.click(`#markets-list article[data-name="acme-tools"] button[data-action="update-market"]`)
	p.until("the marketplace read again", `document.getElementById("markets-notice").textContent.includes("moved from")`)
	if got := p.text("#markets-notice"); !strings.Contains(got, "acme-tools moved from "+first[:12]+" to "+moved[:12]) || !strings.Contains(got, "1 installed plugin has an update") {
		t.Errorf("notice after Update: %q", got)
	}
	if got := p.text(`li.entry[data-name="alpha"]`); !strings.Contains(got, "update available") || !strings.Contains(got, first[:12]+" → "+moved[:12]) {
		t.Errorf("alpha's entry after the move: %q", got)
	}
	if got := p.text(`li.entry[data-name="gamma"]`); strings.Contains(got, "update available") || !strings.Contains(got, "installed") {
		t.Errorf("gamma (pinned elsewhere) after the move: %q", got)
	}
	if got := p.text(`#markets-list article[data-name="acme-tools"] .prow-head`); !strings.Contains(got, "commit "+moved[:12]) || !strings.Contains(got, "1 update available") {
		t.Errorf("the row after the move: %q", got)
	}
	p.shot("markets-update-available")

	// Installed → alpha → Update: the plan shows the move, the added hook
	// and the raised risk; nothing changes before Apply.
	p.showInstalled()
	p.click(`#installed-list article[data-name="alpha"] .expander`)
	p.click(`#installed-list article[data-name="alpha"] button[data-action="update"]`)
	p.visible(`#installed-update-cards article[data-name="alpha"]`)
	if got := eval[string](p, `document.activeElement.id`); got != "installed-update-title" {
		t.Errorf("after planning the update, focus is on %q", got)
	}
	card := p.text(`#installed-update-cards article[data-name="alpha"]`)
	for _, want := range []string{"v1.0.0 → v1.1.0", "Commit " + first[:12] + " → " + moved[:12], "high risk", "was medium",
		"adds hook SessionStart", "${CLAUDE_PLUGIN_ROOT}/scripts/phone-home.sh", "Riskier than what is installed"} {
		if !strings.Contains(card, want) {
			t.Errorf("alpha's update card lacks %q:\n%s", want, card)
		}
	}
	if strings.Contains(card, "PreToolUse") {
		t.Errorf("the diff lists the unchanged PreToolUse hook:\n%s", card)
	}
	if strings.Contains(p.text("#installed-review"), alphaSecret) {
		t.Fatal("the update review shows a credential")
	}
	if e.installed()["alpha"].Commit != first {
		t.Fatal("planning the update changed the registry")
	}
	if got := p.text("#installed-progress-text"); !strings.HasPrefix(got, "Update plan ready") {
		t.Errorf("progress line after planning: %q", got)
	}
	p.shot("installed-update-review")
	p.narrow()
	if overflow := eval[bool](p, `document.documentElement.scrollWidth > window.innerWidth + 1`); overflow {
		t.Error("the update review scrolls sideways on a narrow window")
	}
	p.shot("installed-update-review-narrow")
	p.wide()

	p.click("#installed-apply")
	p.until("the update", `document.getElementById("installed-update-result")?.dataset.status === "applied"`)
	if got := e.installed()["alpha"]; got.Commit != moved || got.Version != "1.1.0" {
		t.Fatalf("alpha after Apply: commit %s version %s, want %s 1.1.0", got.Commit, got.Version, moved)
	}
	if got := p.text("#installed-update-result"); !strings.Contains(got, "Updated") || !strings.Contains(got, "alpha now at commit "+moved[:12]) {
		t.Errorf("result: %q", got)
	}
	if eval[bool](p, `document.getElementById("installed-apply") !== null`) {
		t.Error("Apply is still offered for an applied plan")
	}
	if got := p.text(`#installed-list article[data-name="alpha"] .prow-head`); !strings.Contains(got, "commit "+moved[:12]) {
		t.Errorf("alpha's row after the update: %q", got)
	}
	p.shot("installed-updated")

	// gamma is where its pin is: the review says up to date, plainly.
	p.click(`#installed-list article[data-name="gamma"] .expander`)
	p.click(`#installed-list article[data-name="gamma"] button[data-action="update"]`)
	p.visible("#installed-uptodate")
	if got := p.text("#installed-uptodate"); !strings.Contains(got, "Up to date.") || !strings.Contains(got, "gamma is at commit "+e.installed()["gamma"].Commit[:12]) {
		t.Errorf("up to date: %q", got)
	}
	if eval[bool](p, `document.getElementById("installed-apply") !== null`) {
		t.Error("an up-to-date review offers Apply")
	}
	p.shot("installed-up-to-date")
	p.click(`#installed-review button[data-action="close-review"]`)
	p.until("the review closed", `document.getElementById("installed-review").hidden`)

	// A second move, updated in bulk from the Marketplaces screen: one
	// review for all of acme-tools' plugins.
	second := fx.market.Commit("main", map[string]string{"plugins/alpha/skills/greet/SKILL.md": "---\nname: greet\ndescription: Greet the user warmly\n---\nHello.\n"})
	p.showMarketplaces()
	p.click(`#markets-list article[data-name="acme-tools"] button[data-action="update-market"]`)
	p.until("the second move", `document.getElementById("markets-notice").textContent.includes("to `+second[:12]+`")`)
	if got := p.text(`#markets-list article[data-name="acme-tools"] button[data-action="update-plugins"]`); got != "Review 1 update" {
		t.Errorf("bulk update button: %q", got)
	}
	p.click(`#markets-list article[data-name="acme-tools"] button[data-action="update-plugins"]`)
	p.visible(`#markets-update-cards article[data-name="alpha"]`)
	review := p.text("#markets-review")
	for _, want := range []string{"Update the plugins of acme-tools", "changes skill /alpha:greet", "Greet the user by name → Greet the user warmly",
		"Up to date (1)", "gamma", "Apply update of 1 plugin"} {
		if !strings.Contains(review, want) {
			t.Errorf("the bulk review lacks %q:\n%s", want, review)
		}
	}
	p.shot("markets-bulk-update")
	p.narrow()
	if overflow := eval[bool](p, `document.documentElement.scrollWidth > window.innerWidth + 1`); overflow {
		t.Error("the Marketplaces screen scrolls sideways on a narrow window")
	}
	p.shot("markets-narrow")
	p.wide()
	p.click("#markets-apply")
	p.until("the bulk update", `document.getElementById("markets-update-result")?.dataset.status === "applied"`)
	if got := e.installed(); got["alpha"].Commit != second || got["gamma"].Commit != fx.gamma.Head("main") {
		t.Fatalf("after the bulk update: alpha %s gamma %s", got["alpha"].Commit, got["gamma"].Commit)
	}
	p.until("the marks cleared", `document.querySelector('#markets-list .badge.update') === null`)

	// Remove asks, then says which plugins came from it before forgetting
	// it with them kept.
	p.click(`#markets-list article[data-name="acme-tools"] button[data-action="remove-market"]`)
	p.visible("#confirm")
	p.click("#confirm-ok")
	p.until("the second question", `document.getElementById("confirm").open && document.getElementById("confirm-ok").textContent === "Remove anyway"`)
	if got := p.text("#confirm-text"); !strings.Contains(got, "alpha, gamma were installed from acme-tools") {
		t.Errorf("second question: %q", got)
	}
	p.shot("markets-remove-in-use")
	p.click("#confirm-ok")
	p.visible("#markets-empty")
	if got := p.text("#markets-notice"); !strings.Contains(got, "Removed acme-tools. alpha, gamma stay installed") {
		t.Errorf("notice after remove: %q", got)
	}
	if got := e.installed(); len(got) != 2 || got["alpha"].MarketplaceName != "" {
		t.Fatalf("after removing the marketplace: %+v", got)
	}
}

// TestBrowserMarketplaceTextIsInert: markup and terminal escapes in a
// marketplace's description, an entry's description and an update's diff
// render as visible text on the Marketplaces screen and in the update
// review, and run nothing. It also drives "Check all for updates".
func TestBrowserMarketplaceTextIsInert(t *testing.T) {
	e := newEnv(t, envOpts{})
	desc, err := json.Marshal(hostileText)
	if err != nil {
		t.Fatal(err)
	}
	market := writeTree(t, filepath.Join(t.TempDir(), "hostile"), map[string]string{
		".claude-plugin/marketplace.json":  `{"name":"hostile","owner":{"name":"o"},"description":` + string(desc) + `,"plugins":[{"name":"inert","source":"./inert","description":` + string(desc) + `}]}`,
		"inert/.claude-plugin/plugin.json": `{"name":"inert","version":"1.0.0"}`,
		"inert/skills/s/SKILL.md":          "---\nname: s\ndescription: fine\n---\nx\n",
	})
	p := newTab(t, e)
	p.signIn()
	p.showMarketplaces()
	p.do(chromedp.SendKeys(chromedp.CSS("#market-source"), market))
	p.click("#market-add")
	p.visible(`li.entry[data-name="inert"]`)
	if got := p.text(`#markets-list article[data-name="hostile"] .prow-head`); !strings.Contains(got, "local folder") {
		t.Errorf("a local marketplace's row: %q", got)
	}

	check := func(where, sel string, wants ...string) {
		t.Helper()
		if n := eval[int](p, `document.querySelectorAll("`+sel+` script, `+sel+` img, #bold").length`); n != 0 {
			t.Fatalf("%s: %d elements came from plugin text", where, n)
		}
		if pwned := eval[bool](p, `window.__pwned !== undefined`); pwned {
			t.Fatalf("%s: plugin text ran", where)
		}
		text := run(p, chromedp.TextContent(chromedp.CSS(sel)))
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not show %q as text:\n%s", where, want, text)
			}
		}
		if strings.ContainsAny(text, "\x1b\x07\u202e") {
			t.Errorf("%s holds a raw escape or bidi character", where)
		}
	}
	hostileShown := []string{`<script>window.__pwned=1</script>`, `<img src=x onerror="window.__pwned=2">`, `\x1b[31mRED`, `\u202eevil`}
	check("the marketplace row", "#markets-list", hostileShown...)
	p.shot("markets-inert")

	p.click(`li.entry[data-name="inert"] input`)
	p.click(`button[data-action="review-install"]`)
	p.visible(`#plan-cards article[data-name="inert"]`)
	p.click("#install-button")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)

	// The plugin gains a hook whose command is markup: the update review
	// of "Check all for updates" shows it as text.
	writeTree(t, filepath.Join(market, "inert"), map[string]string{
		"hooks/hooks.json": `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo \"<script>window.__pwned=3</script>\""}]}]}}`,
	})
	p.showInstalled()
	p.click("#update-all")
	p.visible(`#installed-update-cards article[data-name="inert"]`)
	if got := p.text("#installed-update-title"); got != "Update all installed plugins" {
		t.Errorf("review title: %q", got)
	}
	check("the update review", "#installed-review", `adds hook SessionStart`, `echo "<script>window.__pwned=3</script>"`)
	// A local folder has no commit: the move is shown by content digest.
	if got := p.text(`#installed-update-cards article[data-name="inert"] .move`); !strings.HasPrefix(got, "Content sha256:") || strings.Count(got, "sha256:") != 2 {
		t.Errorf("the move of a local plugin: %q", got)
	}
	p.shot("installed-update-inert")

	// The plugin changes again before Apply: the update is refused,
	// nothing is written, and Review again plans what it is now.
	before := e.installed()["inert"]
	writeTree(t, filepath.Join(market, "inert"), map[string]string{"skills/s/SKILL.md": "---\nname: s\ndescription: changed\n---\nx\n"})
	p.do(chromedp.Focus(chromedp.CSS("#installed-apply")), chromedp.KeyEvent("\r"))
	p.until("the refusal", `document.getElementById("installed-update-result")?.dataset.status === "refused"`)
	if got := p.text("#installed-update-result"); !strings.Contains(got, "Update refused") || !strings.Contains(got, "install.approval_denied") {
		t.Errorf("refusal: %q", got)
	}
	if got := e.installed()["inert"]; got.ContentDigest != before.ContentDigest {
		t.Fatal("a refused update wrote the registry")
	}
	p.shot("installed-update-refused")
	p.click("#installed-update-result button")
	p.until("the new plan", `document.getElementById("installed-apply") !== null && !document.getElementById("installed-apply").disabled`)
	if got := p.text(`#installed-update-cards article[data-name="inert"] .diff`); !strings.Contains(got, "changes skill /inert:s") {
		t.Errorf("the new plan's diff: %q", got)
	}
	p.click("#installed-apply")
	p.until("the update", `document.getElementById("installed-update-result")?.dataset.status === "applied"`)
	if got := e.installed()["inert"]; got.ContentDigest == before.ContentDigest {
		t.Fatal("Apply did not update inert")
	}
}

// TestBrowserDependencies: a plan card says what a plugin needs and what
// needs it; the installed row says so too, and removing a plugin another
// needs asks first, naming who needs it, then removes it (the answer is
// the --force).
func TestBrowserDependencies(t *testing.T) {
	e := newEnv(t, envOpts{})
	skill := "---\nname: s\ndescription: s\n---\nx\n"
	market := writeTree(t, filepath.Join(t.TempDir(), "deps"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"deps","owner":{"name":"o"},"plugins":[{"name":"kit","source":"./kit"},{"name":"lib","source":"./lib"}]}`,
		"kit/.claude-plugin/plugin.json":  `{"name":"kit","version":"1.0.0","dependencies":["lib"]}`,
		"kit/skills/s/SKILL.md":           skill,
		"lib/.claude-plugin/plugin.json":  `{"name":"lib","version":"1.0.0"}`,
		"lib/skills/s/SKILL.md":           skill,
	})
	p := newTab(t, e)
	p.signIn()
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), market))
	p.click("#plan-button")
	p.visible(`#plan-cards article[data-name="lib"]`)
	if got := p.text(`#plan-cards article[data-name="kit"] .deps`); got != "needs lib" {
		t.Errorf("kit's card: %q", got)
	}
	if got := p.text(`#plan-cards article[data-name="lib"] .deps`); got != "needed by kit" {
		t.Errorf("lib's card: %q", got)
	}
	p.shot("add-dependencies")
	p.click("#install-button")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)

	p.showInstalled()
	p.click(`#installed-list article[data-name="lib"] .expander`)
	if got := p.text(`#installed-list article[data-name="lib"] .facts`); !strings.Contains(got, "Needed by") || !strings.Contains(got, "kit") {
		t.Errorf("lib's row: %q", got)
	}
	p.click(`#installed-list article[data-name="lib"] button[data-action="remove"]`)
	p.visible("#confirm")
	if got := p.text("#confirm-text"); !strings.Contains(got, "kit needs it and stays installed without it") {
		t.Errorf("the question: %q", got)
	}
	p.click("#confirm-ok")
	p.until("lib's row gone", `document.querySelector('#installed-list article[data-name="lib"]') === null`)
	if _, ok := e.installed()["lib"]; ok {
		t.Fatal("Remove did not remove lib")
	}
	if _, ok := e.installed()["kit"]; !ok {
		t.Fatal("removing lib took kit")
	}
}

// showMarketplaces opens the Marketplaces screen and waits until its list
// is drawn from a fresh read: a click on a row that is about to be
// replaced would land on whatever takes its place.
func (p *tab) showMarketplaces() { p.t.Helper(); p.showScreen("marketplaces", "markets-list") }

// showInstalled is showMarketplaces for the Installed screen.
func (p *tab) showInstalled() { p.t.Helper(); p.showScreen("installed", "installed-list") }

func (p *tab) showScreen(screen, list string) {
	p.t.Helper()
	before := eval[string](p, `document.getElementById(`+jsString(list)+`).dataset.reads || "0"`)
	p.click(`#tabs a[data-screen="` + screen + `"]`)
	p.until("the "+screen+" list", `(() => { const l = document.getElementById(`+jsString(list)+`);
		return l.getAttribute("aria-busy") === "false" && (l.dataset.reads || "0") !== `+jsString(before)+`; })()`)
}
