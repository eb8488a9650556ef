package server

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
)

// flagOnPage matches a command-line flag in text ("--replace").
var flagOnPage = regexp.MustCompile("(^|[\\s(`'\"])--[a-z]")

// noFlags fails when the page's text names a command-line flag.
func (p *tab) noFlags(when string) {
	p.t.Helper()
	text := eval[string](p, `document.body.innerText`)
	if loc := flagOnPage.FindStringIndex(text); loc != nil {
		from, to := max(0, loc[0]-120), min(len(text), loc[1]+120)
		p.t.Errorf("%s, the page names a command-line flag: …%s…", when, text[from:to])
	}
}

func toolsFiles(version string) map[string]string {
	return map[string]string{
		".claude-plugin/plugin.json": `{"name":"tools","version":"` + version + `","description":"Tools for people"}`,
		"skills/fix/SKILL.md":        "---\nname: fix\ndescription: Fix things\n---\nFix.\n",
	}
}

// TestBrowserNameAtMarketInstalls: NAME@MARKET, as the Add box's hint
// offers it, plans and installs; the known marketplace's bare name plans
// the rest, showing what is installed already as installed.
func TestBrowserNameAtMarketInstalls(t *testing.T) {
	e := newEnv(t, envOpts{})
	market := writeTree(t, filepath.Join(t.TempDir(), "shelf"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"shelf","owner":{"name":"o"},"plugins":[{"name":"one","source":"./one"},{"name":"two","source":"./two"}]}`,
	})
	for _, n := range []string{"one", "two"} {
		plugin(t, market, n, "1.0.0")
	}
	if r := e.do("POST", "/marketplaces", map[string]any{"source": market}, nil); r.status != 200 {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	p := newTab(t, e)
	p.signIn()
	if hint := p.text("#source-hint"); !strings.Contains(hint, "NAME@MARKETPLACE") {
		t.Fatalf("the hint no longer offers NAME@MARKETPLACE: %q", hint)
	}
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), "one@shelf"))
	p.click("#plan-button")
	p.visible(`#plan-cards article[data-name="one"]`)
	p.click("#install-button")
	p.until("the install", `!!document.getElementById("install-result")?.dataset.status`)
	if got := eval[string](p, `document.getElementById("install-result").dataset.status`); got != "applied" {
		t.Fatalf("one@shelf: %s: %s", got, p.text("#install-result"))
	}
	if got := e.installed(); len(got) != 1 || got["one"].MarketplaceName != "shelf" {
		t.Fatalf("installed %+v", got)
	}

	// The marketplace by its name: one is installed already (said so,
	// with a way to reinstall it), two is ready.
	p.do(chromedp.SetValue(chromedp.CSS("#source"), "shelf"))
	p.click("#plan-button")
	p.visible(`#plan-installed li[data-name="one"]`)
	if got := p.text(`#plan-installed li[data-name="one"]`); !strings.Contains(got, "installed") || !strings.Contains(got, "nothing to do") {
		t.Errorf("one, installed already: %q", got)
	}
	if n := eval[int](p, `document.querySelectorAll("#plan-skipped").length`); n != 0 {
		t.Errorf("an installed plugin is listed as not installable: %s", p.text("#plan-skipped"))
	}
	if got := p.text("#install-button"); got != "Install 1 plugin" {
		t.Errorf("the Install button says %q", got)
	}
	p.click("#install-button")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)
	if _, ok := e.installed()["two"]; !ok {
		t.Fatal("two was not installed")
	}
	p.noFlags("after installing a marketplace by its name")
}

// TestBrowserNoDeadEnds: every refusal on the Add screen says what to do
// in the page's words and offers it as a button — the CLI's suggestion
// for owner/repo, Reinstall for what is installed already, Replace for a
// conflict, Review again for a refused approval, Ask again for a
// remembered "not found" — and no message names a command-line flag.
func TestBrowserNoDeadEnds(t *testing.T) {
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	repo.Commit("main", toolsFiles("1.0.0"))
	e := newEnv(t, envOpts{gh: gh})
	p := newTab(t, e)
	p.signIn()
	plan := func(src string) {
		p.t.Helper()
		p.do(chromedp.SetValue(chromedp.CSS("#source"), src))
		p.click("#plan-button")
	}
	install := func(what string) {
		p.t.Helper()
		p.click("#install-button")
		p.until(what, `!!document.getElementById("install-result")?.dataset.status`)
		if got := eval[string](p, `document.getElementById("install-result").dataset.status`); got != "applied" {
			t.Fatalf("%s: %s: %s", what, got, p.text("#install-result"))
		}
	}

	// owner/repo: the daemon has no working directory, so it suggests the
	// remote form, which is one click away.
	plan("acme/tools")
	p.visible(`#add-notice button[data-action="use-suggestion"]`)
	if got := eval[string](p, `document.querySelector('#add-notice button[data-action="use-suggestion"]').dataset.source`); got != "git:github.com/acme/tools" {
		t.Fatalf("suggested %q", got)
	}
	if got := p.text("#add-notice"); strings.Contains(got, "absolute path") {
		t.Errorf("owner/repo is told about absolute paths: %q", got)
	}
	p.shot("deadend-suggestion")
	p.click(`#add-notice button[data-action="use-suggestion"]`)
	p.visible(`#plan-cards article[data-name="tools"]`)
	if got := eval[string](p, `document.getElementById("source").value`); got != "git:github.com/acme/tools" {
		t.Errorf("the source box says %q after the suggestion", got)
	}
	install("install of the suggestion")

	// The same again is installed already: not an error, and Reinstall
	// plans it as a replacement.
	plan("git:github.com/acme/tools")
	p.visible(`#plan-installed li[data-name="tools"]`)
	if n := eval[int](p, `document.querySelectorAll("#plan-skipped, #plan-error").length`); n != 0 || strings.Contains(p.text("#plan"), "no reason given") {
		t.Errorf("an up-to-date plugin is shown as an error: %s", p.text("#plan"))
	}
	if got := p.text("#install-button"); got != "Nothing to install" {
		t.Errorf("the Install button of an up-to-date plan says %q", got)
	}
	p.noFlags("for an installed plugin")
	p.shot("deadend-installed-already")
	p.click(`#plan-installed button[data-action="reinstall"]`)
	p.until("the reinstall plan", `document.getElementById("plan-asked")?.textContent.includes("replacing") && !document.getElementById("install-button").disabled`)
	install("the reinstall")

	// Another source with the same name is a conflict: Replace plans the
	// replacement, which installs by its own planId.
	local := writeTree(t, filepath.Join(t.TempDir(), "tools"), toolsFiles("9.0.0"))
	plan(local)
	p.visible(`#plan-skipped li[data-name="tools"]`)
	if got := p.text(`#plan-skipped li[data-name="tools"]`); !strings.Contains(got, "conflict") || !strings.Contains(got, "already installed") {
		t.Errorf("the conflict: %q", got)
	}
	p.noFlags("for a conflict")
	p.shot("deadend-conflict")
	p.click("#plan-replace")
	p.until("the replace plan", `!document.getElementById("install-button").disabled`)
	install("the replacement")
	if got := e.installed()["tools"]; got.Source.String() != local || got.Version != "9.0.0" {
		t.Fatalf("after Replace: %+v", got)
	}

	// An approval refused because the source moved: Review again plans
	// what it is now (still as a replacement), and that installs.
	plan("git:github.com/acme/tools")
	p.click("#plan-replace")
	p.until("the replace plan", `!document.getElementById("install-button").disabled`)
	repo.Commit("main", toolsFiles("1.1.0"))
	p.click("#install-button")
	p.until("the refusal", `document.getElementById("install-result")?.dataset.status === "refused"`)
	if got := p.text("#result-error"); !strings.Contains(got, "review it again") {
		t.Errorf("the refusal: %q", got)
	}
	p.noFlags("after a refused approval")
	p.shot("deadend-refused")
	p.click("#review-again")
	p.until("the new plan", `document.getElementById("install-result") === null && !document.getElementById("install-button").disabled`)
	install("the reviewed plan")
	if got := e.installed()["tools"]; got.Version != "1.1.0" {
		t.Fatalf("after Review again: %+v", got)
	}

	// A missing repository is remembered for a while; Ask again asks the
	// host again.
	plan("git:github.com/acme/missing")
	p.until("the refusal", `!document.getElementById("add-notice").hidden`)
	plan("git:github.com/acme/missing")
	p.until("the remembered refusal", `document.getElementById("add-notice").textContent.includes("remembered")`)
	p.noFlags("for a remembered refusal")
	p.visible(`#add-notice button[data-action="ask-again"]`)
	p.click(`#add-notice button[data-action="ask-again"]`)
	p.until("the answer asked again", `!document.getElementById("add-notice").hidden && !document.getElementById("add-notice").textContent.includes("remembered")`)
	p.noFlags("after asking again")
}

// TestBrowserNeededPluginsAsk: a plugin that others need shows who, in its
// collapsed row; removing or disabling it asks first, naming them, as the
// CLI asks for --force — even when the list on screen was read before they
// were installed.
func TestBrowserNeededPluginsAsk(t *testing.T) {
	e := newEnv(t, envOpts{})
	skill := "---\nname: s\ndescription: s\n---\nx\n"
	market := writeTree(t, filepath.Join(t.TempDir(), "deps"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"deps","owner":{"name":"o"},"plugins":[{"name":"kit","source":"./kit"},{"name":"lib","source":"./lib"}]}`,
		"kit/.claude-plugin/plugin.json":  `{"name":"kit","version":"1.0.0","dependencies":["lib"]}`,
		"kit/skills/s/SKILL.md":           skill,
		"lib/.claude-plugin/plugin.json":  `{"name":"lib","version":"1.0.0"}`,
		"lib/skills/s/SKILL.md":           skill,
	})
	if r := e.do("POST", "/marketplaces", map[string]any{"source": market}, nil); r.status != 200 {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	approve := func(src string) {
		t.Helper()
		plan := e.plan(installer.Request{Source: mustSource(src)})
		if r := e.installByPlanID(plan.PlanID); r.status != 200 {
			t.Fatalf("install %s: %d %s", src, r.status, r.body)
		}
	}
	approve("lib@deps")
	p := newTab(t, e)
	p.signIn()
	p.showInstalled()
	// kit comes in behind the page's back: the list on screen is stale.
	approve("kit@deps")

	p.click(`#installed-list article[data-name="lib"] .expander`)
	p.click(`#installed-list article[data-name="lib"] button[data-action="remove"]`)
	p.visible("#confirm")
	p.click("#confirm-ok")
	// The daemon refuses (kit needs lib): the page asks again, naming kit.
	p.until("the second question", `document.getElementById("confirm").open && document.getElementById("confirm-text").textContent.includes("kit needs it")`)
	p.shot("needed-remove-asks")
	p.click("#confirm-cancel")
	if _, ok := e.installed()["lib"]; !ok {
		t.Fatal("Cancel removed lib")
	}
	p.noFlags("after a refused remove")
	if got := p.text(`#installed-list article[data-name="lib"] .prow-head`); !strings.Contains(got, "needed by kit") {
		t.Errorf("lib's collapsed row: %q", got)
	}
	if got := p.text(`#installed-list article[data-name="kit"] .prow-head`); !strings.Contains(got, "needs lib") {
		t.Errorf("kit's collapsed row: %q", got)
	}

	// Disable asks too, and says who stays enabled without it.
	p.click(`#installed-list article[data-name="lib"] button[data-action="toggle"]`)
	p.visible("#confirm")
	if got := p.text("#confirm-text"); !strings.Contains(got, "kit needs lib") {
		t.Errorf("the disable question: %q", got)
	}
	p.click("#confirm-ok")
	p.until("lib disabled", `document.getElementById("installed-notice").textContent.includes("Disabled lib")`)
	if got := p.text("#installed-notice"); !strings.Contains(got, "kit needed lib") {
		t.Errorf("the notice after disabling lib: %q", got)
	}
	if e.installed()["lib"].Enabled {
		t.Fatal("lib is still enabled")
	}
	p.noFlags("after disabling a needed plugin")

	// A disable the daemon refuses (the list was stale) asks as well.
	if r := e.do("POST", "/plugins/enabled", map[string]any{"name": "lib", "enabled": true}, nil); r.status != 200 {
		t.Fatalf("enable: %d %s", r.status, r.body)
	}
	r := e.do("POST", "/plugins/enabled", map[string]any{"name": "lib", "enabled": false}, nil)
	r.wantError(t, 422, "install.conflict")
	if r := e.do("POST", "/plugins/enabled", map[string]any{"name": "lib", "enabled": false, "force": true}, nil); r.status != 200 || !strings.Contains(string(r.body), "kit needed lib") {
		t.Fatalf("disable with force: %d %s", r.status, r.body)
	}
}
