package server

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
)

// TestBrowserSignIn: a code signs a browser in; the page says when it is
// not signed in, and a reused or expired code is refused, saying which.
func TestBrowserSignIn(t *testing.T) {
	clock := newTestClock()
	e := newEnv(t, envOpts{now: clock.Now})
	p := newTab(t, e)

	p.open("/")
	p.visible("#screen-signin")
	if got := p.text("#signin-reason"); got != "Signed out — run `reasonix studio` to sign in." {
		t.Fatalf("signed-out page: %q", got)
	}
	if !eval[bool](p, `document.getElementById("tabs").hidden && document.getElementById("screen-add").hidden`) {
		t.Fatal("a signed-out page shows the screens")
	}
	p.shot("signin")

	code := e.loginCode()
	p.open("/login?code=" + code)
	p.visible("#screen-add")
	if loc := eval[string](p, `location.href`); loc != e.ts.URL+"/" {
		t.Fatalf("after sign-in the address is %q; the code and the page token must leave it", loc)
	}
	if tok := eval[string](p, `localStorage.getItem("reasonix.pageToken") || ""`); len(tok) < 40 {
		t.Fatalf("the page token is not in the origin's storage: %q", tok)
	}
	if c := eval[string](p, `document.cookie`); c != "" {
		t.Fatalf("the page can read a cookie: %q", c)
	}
	if eval[bool](p, `document.documentElement.outerHTML.includes(`+jsString(testToken)+`)`) {
		t.Fatal("the token reached the page")
	}
	p.shot("add-empty")

	// The same code in another browser is refused, and says why.
	other := newTab(t, e)
	other.open("/login?code=" + code)
	other.visible("#login-refused")
	if got := other.text("#login-reason"); !strings.Contains(got, "already used") {
		t.Fatalf("reused code: %q", got)
	}
	other.shot("login-refused")
	other.open("/")
	other.visible("#screen-signin")

	late := e.loginCode()
	clock.Advance(CodeTTL + time.Second)
	other.open("/login?code=" + late)
	other.visible("#login-refused")
	if got := other.text("#login-reason"); !strings.Contains(got, "expired") {
		t.Fatalf("expired code: %q", got)
	}

	// A page whose token is gone (storage cleared) says it is signed out,
	// plainly, though the cookie is still there.
	token := eval[string](p, `localStorage.getItem("reasonix.pageToken")`)
	p.do(chromedp.Evaluate[chromedp.Void](`localStorage.removeItem("reasonix.pageToken")`))
	p.open("/#installed")
	p.visible("#screen-signin")
	if got := p.text("#signin-reason"); got != "Signed out — run `reasonix studio` to sign in." {
		t.Fatalf("without a page token: %q", got)
	}
	p.do(chromedp.Evaluate[chromedp.Void](`localStorage.setItem("reasonix.pageToken", `+jsString(token)+`)`), chromedp.Reload())
	p.visible("#screen-installed")

	// Signing out ends the session; the page says so.
	p.click("#signout")
	p.visible("#screen-signin")
	if got := p.text("#signin-reason"); !strings.Contains(got, "signed out") {
		t.Fatalf("after sign-out: %q", got)
	}
	if tok := eval[string](p, `localStorage.getItem("reasonix.pageToken") || ""`); tok != "" {
		t.Fatalf("the page token outlived the sign-out: %q", tok)
	}
	p.open("/")
	p.visible("#screen-signin")
}

// marketFixture is a marketplace on the fake GitHub: two plugins in its
// own repository (alpha: hooks and an MCP server with a credential; beta: a
// FULL TRUST runtime), one in another repository (gamma), and an npm entry
// that cannot be pinned.
type marketFixture struct {
	gh     *fakegithub.Server
	source string
	market *fakegithub.Repo
	gamma  *fakegithub.Repo
}

const alphaSecret = "sk-live-not-a-real-key-123456"

func alphaFiles(version string) map[string]string {
	return map[string]string{
		".claude-plugin/plugin.json": `{"name":"alpha","version":"` + version + `","description":"Alpha greets people and guards the shell"}`,
		"skills/greet/SKILL.md":      "---\nname: greet\ndescription: Greet the user by name\n---\nHello.\n",
		"commands/wave.md":           "---\ndescription: Wave at someone\nargument-hint: <who>\n---\nWave at $1\n",
		"hooks/hooks.json":           `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh"}]}]}}`,
		"scripts/guard.sh":           fakegithub.Executable("#!/bin/sh\nexit 0\n"),
		".mcp.json":                  `{"mcpServers":{"weather":{"command":"weather-mcp","args":["--stdio"],"env":{"WEATHER_API_KEY":"` + alphaSecret + `"}}}}`,
	}
}

func newMarketFixture(t *testing.T) *marketFixture {
	t.Helper()
	gh := fakegithub.New(t)
	fx := &marketFixture{gh: gh}
	fx.gamma = gh.CreateRepo("acme", "gamma")
	gammaSHA := fx.gamma.Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name":"gamma","version":"0.3.0","description":"Gamma lives in a repository of its own"}`,
		"skills/g/SKILL.md":          "---\nname: g\ndescription: Do the gamma thing\n---\nG.\n",
	})
	files := map[string]string{
		".claude-plugin/marketplace.json": `{"name":"acme-tools","owner":{"name":"acme"},"plugins":[` +
			`{"name":"alpha","source":"./plugins/alpha"},` +
			`{"name":"beta","source":"./plugins/beta"},` +
			`{"name":"gamma","source":{"source":"github","repo":"acme/gamma","sha":"` + gammaSHA + `"}},` +
			`{"name":"npm-one","source":{"source":"npm","package":"@acme/one"}}]}`,
		"plugins/beta/reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2","name":"beta","version":"2.0.0","description":"Beta runs a sidecar",` +
			`"contributes":{"skills":["skills"]},"runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/sidecar","args":["--serve"],` +
			`"capabilities":["tools"],"tools":[{"name":"lookup","description":"Look things up","readOnly":true,"inputSchema":{"type":"object"}}]}}`,
		"plugins/beta/skills/notes/SKILL.md": "---\nname: notes\ndescription: Keep notes\n---\nNotes.\n",
		"plugins/beta/bin/sidecar":           fakegithub.Executable("#!/bin/sh\nexit 0\n"),
	}
	for k, v := range alphaFiles("1.0.0") {
		files["plugins/alpha/"+k] = v
	}
	fx.market = gh.CreateRepo("acme", "market")
	fx.market.Commit("main", files)
	fx.source = "https://github.com/acme/market"
	return fx
}

// registry reads the installed plugins by name.
func (e *env) installed() map[string]installer.Entry {
	e.t.Helper()
	reg, err := installer.LoadRegistry(e.home.RegistryPath())
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]installer.Entry{}
	for _, p := range reg.Plugins {
		out[p.Name] = p
	}
	return out
}

// TestBrowserMarketplace plans a marketplace from the fake GitHub, narrows
// it, installs exactly the narrowed plan, and then disables, exports and
// removes from the Installed screen.
func TestBrowserMarketplace(t *testing.T) {
	fx := newMarketFixture(t)
	e := newEnv(t, envOpts{gh: fx.gh})
	p := newTab(t, e)
	p.signIn()

	p.do(chromedp.SendKeys(chromedp.CSS("#source"), fx.source))
	p.click("#plan-button")
	p.visible("#plan-cards")
	p.until("the progress summary", `document.getElementById("add-progress").classList.contains("finished")`)

	// One card per installable plugin, the rest with their reasons.
	cards := eval[[]string](p, `Array.from(document.querySelectorAll("#plan-cards article")).map(a => a.dataset.name)`)
	if strings.Join(cards, ",") != "alpha,beta,gamma" {
		t.Fatalf("cards: %v", cards)
	}
	// Text folded away in a closed <details> counts too: it is one click away.
	alpha := run(p, chromedp.TextContent(chromedp.CSS(`#plan-cards article[data-name="alpha"]`)))
	for _, want := range []string{"medium risk", "/alpha:greet", "/alpha:wave <who>", "PreToolUse", "guard.sh", "weather", "WEATHER_API_KEY=***", "commit "} {
		if !strings.Contains(alpha, want) {
			t.Errorf("alpha's card lacks %q:\n%s", want, alpha)
		}
	}
	beta := p.text(`#plan-cards article[data-name="beta"] .fulltrust`)
	for _, want := range []string{"FULL TRUST runtime", "${REASONIX_PLUGIN_ROOT}/bin/sidecar --serve", "ext__beta__lookup", "outside the sandbox"} {
		if !strings.Contains(beta, want) {
			t.Errorf("beta's FULL TRUST block lacks %q:\n%s", want, beta)
		}
	}
	if got := p.text(`#plan-cards article[data-name="beta"] .badge.risk-high`); got != "high risk" {
		t.Errorf("beta's risk badge: %q", got)
	}
	if got := p.text(`#plan-skipped li[data-name="npm-one"]`); !strings.Contains(got, "skipped") || !strings.Contains(got, "npm") {
		t.Errorf("the npm entry: %q", got)
	}
	if html := eval[string](p, `document.getElementById("plan").innerText`); strings.Contains(html, alphaSecret) {
		t.Fatal("the plan shows a credential")
	}
	progress := p.text("#add-progress-text")
	if !strings.Contains(progress, "4 of 4 entries resolved") || !strings.Contains(progress, "1 repository fetched") {
		t.Errorf("progress summary: %q", progress)
	}
	fullPlan := p.text("#plan-id")
	p.shot("add-plan")

	// Narrow the selection: Install waits until the selection is reviewed.
	p.click(`#plan-cards input[data-name="gamma"]`)
	p.visible("#review-selection")
	if !eval[bool](p, `document.getElementById("install-button").disabled`) {
		t.Fatal("Install is enabled for a plan that is not the one selected")
	}
	p.shot("add-selection-changed")
	p.click("#review-selection")
	p.until("the narrowed plan", `document.getElementById("plan-id").textContent !== `+jsString(fullPlan))
	narrowed := p.text("#plan-id")
	if got := p.text(`#plan-cards article[data-name="gamma"] .badge.status-ready`); got != "not in this plan" {
		t.Errorf("gamma after narrowing: %q", got)
	}
	if eval[bool](p, `document.getElementById("install-button").disabled`) {
		t.Fatal("Install is disabled for the reviewed selection")
	}
	sp, ok, err := e.in.StoredPlan(context.Background(), narrowed)
	if err != nil || !ok || strings.Join(sp.Request.Names, ",") != "alpha,beta" {
		t.Fatalf("the plan shown is not the narrowed one: %v %v %+v", ok, err, sp)
	}

	p.click("#install-button")
	p.until("the install result", `document.getElementById("install-result")?.dataset.status === "applied"`)
	p.shot("add-installed")
	got := e.installed()
	if len(got) != 2 || got["alpha"].Name == "" || got["beta"].Name == "" {
		t.Fatalf("installed: %v", got)
	}
	if got["alpha"].Commit != fx.market.Head("main") {
		t.Fatalf("alpha's commit %s, want %s", got["alpha"].Commit, fx.market.Head("main"))
	}

	// Installed: rows, expand, disable, export, remove.
	p.click(`#install-result a[href="#installed"]`)
	p.visible(`#installed-list article[data-name="beta"]`)
	rows := eval[[]string](p, `Array.from(document.querySelectorAll("#installed-list article")).map(a => a.dataset.name)`)
	if strings.Join(rows, ",") != "alpha,beta" {
		t.Fatalf("installed rows: %v", rows)
	}
	if got := p.text(`#installed-list article[data-name="beta"] .prow-head`); !strings.Contains(got, "FULL TRUST runtime") {
		t.Errorf("beta's collapsed row does not say it runs a FULL TRUST runtime: %q", got)
	}
	p.shot("installed")
	p.click(`#installed-list article[data-name="alpha"] .expander`)
	p.visible(`#installed-list article[data-name="alpha"] .prow-body`)
	body := p.text(`#installed-list article[data-name="alpha"] .prow-body`)
	for _, want := range []string{"/alpha:greet", "PreToolUse", "weather", "Disable", "Export", "Remove"} {
		if !strings.Contains(body, want) {
			t.Errorf("alpha's expanded row lacks %q:\n%s", want, body)
		}
	}
	if got := eval[string](p, `document.querySelector('#installed-list article[data-name="alpha"] .expander').getAttribute("aria-expanded")`); got != "true" {
		t.Errorf("aria-expanded = %q", got)
	}
	p.shot("installed-expanded")

	p.click(`#installed-list article[data-name="alpha"] button[data-action="toggle"]`)
	p.until("alpha disabled", `document.querySelector('#installed-list article[data-name="alpha"] .badge.off') !== null`)
	if e.installed()["alpha"].Enabled {
		t.Fatal("Disable did not disable alpha")
	}
	if got := p.text("#installed-notice"); !strings.Contains(got, "Disabled alpha") {
		t.Errorf("notice after disable: %q", got)
	}

	downloads := t.TempDir()
	p.downloadsTo(downloads)
	p.click(`#installed-list article[data-name="alpha"] button[data-action="export"]`)
	p.until("the export notice", `document.getElementById("installed-notice").textContent.includes("Exported alpha.zip")`)
	zipPath := filepath.Join(downloads, "alpha.zip")
	var data []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		data, err = os.ReadFile(zipPath)
		if err == nil && len(data) > 0 {
			if _, zerr := zip.NewReader(bytes.NewReader(data), int64(len(data))); zerr == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no complete download at %s: %v", zipPath, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bytes.Contains(data, []byte(alphaSecret)) {
		t.Fatal("the exported zip holds the credential")
	}

	// Remove asks first; Cancel keeps the plugin.
	p.click(`#installed-list article[data-name="beta"] .expander`)
	p.click(`#installed-list article[data-name="beta"] button[data-action="remove"]`)
	p.visible("#confirm")
	if got := p.text("#confirm-title"); got != "Remove beta?" {
		t.Errorf("confirmation: %q", got)
	}
	p.shot("remove-confirm")
	p.click("#confirm-cancel")
	p.do(chromedp.WaitNotVisible(chromedp.CSS("#confirm")))
	if _, ok := e.installed()["beta"]; !ok {
		t.Fatal("Cancel removed beta")
	}
	p.click(`#installed-list article[data-name="beta"] button[data-action="remove"]`)
	p.visible("#confirm")
	p.click("#confirm-ok")
	p.until("beta's row gone", `document.querySelector('#installed-list article[data-name="beta"]') === null`)
	if _, ok := e.installed()["beta"]; ok {
		t.Fatal("Remove did not remove beta")
	}

	p.click("#reload")
	p.until("the reload answer", `document.getElementById("reload-result").textContent.includes("Runtime reloaded")`)
	p.shot("installed-after")

	// A narrow window: everything still fits the width.
	p.narrow()
	p.click(`#installed-list article[data-name="alpha"] .expander`)
	p.click(`#installed-list article[data-name="alpha"] .expander`)
	if overflow := eval[bool](p, `document.documentElement.scrollWidth > window.innerWidth + 1`); overflow {
		t.Error("the Installed screen scrolls sideways on a narrow window")
	}
	p.shot("installed-narrow")
	p.click(`#tabs a[data-screen="add"]`)
	p.visible("#plan-cards")
	if overflow := eval[bool](p, `document.documentElement.scrollWidth > window.innerWidth + 1`); overflow {
		t.Error("the Add screen scrolls sideways on a narrow window")
	}
	p.shot("add-narrow")
	p.wide()
}

// TestBrowserRefusedInstall: a source that changed between the plan and
// Install is refused, the page says so, and nothing is written.
func TestBrowserRefusedInstall(t *testing.T) {
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "alpha")
	repo.Commit("main", alphaFiles("1.0.0"))
	e := newEnv(t, envOpts{gh: gh})
	p := newTab(t, e)
	p.signIn()

	// A source the daemon refuses before planning is said so, with no plan.
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), "https://github.com/acme/alpha/blob/main/x"))
	p.click("#plan-button")
	p.until("the refusal", `!document.getElementById("add-notice").hidden`)
	if got := p.text("#add-notice"); !strings.Contains(got, "Could not plan") || !strings.Contains(got, "install.invalid_source") {
		t.Fatalf("notice: %q", got)
	}
	if !eval[bool](p, `document.getElementById("plan").hidden && document.getElementById("add-progress").hidden`) {
		t.Fatal("a refused source shows a plan or a progress line")
	}
	p.shot("add-invalid-source")

	p.do(chromedp.SetValue(chromedp.CSS("#source"), "https://github.com/acme/alpha"))
	p.click("#plan-button")
	p.visible(`#plan-cards article[data-name="alpha"]`)

	repo.Commit("main", alphaFiles("1.0.1")) // the source moves on
	p.click("#install-button")
	p.until("the refusal", `document.getElementById("install-result")?.dataset.status === "refused"`)
	if got := p.text("#result-error"); !strings.Contains(got, "install.approval_denied") || !strings.Contains(got, "https://github.com/acme/alpha moved from commit") {
		t.Fatalf("refusal: %q", got)
	}
	if got := p.text("#install-result h3"); got != "Install refused" {
		t.Fatalf("result title: %q", got)
	}
	if len(e.installed()) != 0 {
		t.Fatal("a refused install wrote the registry")
	}
	if !eval[bool](p, `document.getElementById("install-button").disabled`) {
		t.Fatal("Install stays enabled for a refused plan")
	}
	if got := p.text("#add-progress-text"); !strings.HasPrefix(got, "Install refused") {
		t.Fatalf("progress line after a refusal: %q", got)
	}
	p.shot("add-refused")

	// Planning again shows the new commit, which installs.
	p.click("#install-result button")
	p.until("the new plan", `document.getElementById("install-result") === null && !document.getElementById("install-button").disabled`)
	p.click("#install-button")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)
	if got := e.installed()["alpha"]; got.Version != "1.0.1" {
		t.Fatalf("installed %+v", got)
	}
}

// hostileText is plugin-supplied text that would run, restyle or reorder
// the page (or a terminal) if it were treated as anything but text.
const hostileText = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b id="bold">bold</b>` +
	"\x1b[31mRED\x1b]8;;http://evil.example\x07link\u202eevil"

// TestBrowserPluginTextIsInert: markup and terminal escapes in a plugin's
// description, skill and hook render as visible text, in the plan and in
// the Installed screen, and run nothing.
func TestBrowserPluginTextIsInert(t *testing.T) {
	e := newEnv(t, envOpts{})
	desc, err := json.Marshal(hostileText)
	if err != nil {
		t.Fatal(err)
	}
	src := writeTree(t, filepath.Join(t.TempDir(), "inert"), map[string]string{
		".claude-plugin/plugin.json": `{"name":"inert","version":"1.0.0","description":` + string(desc) + `}`,
		"skills/s/SKILL.md":          "---\nname: s\ndescription: " + string(desc) + "\n---\nx\n",
		"hooks/hooks.json":           `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo \"<script>window.__pwned=3</script>\""}]}]}}`,
	})
	p := newTab(t, e)
	p.signIn()
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), src))
	p.click("#plan-button")
	p.visible(`#plan-cards article[data-name="inert"]`)

	check := func(where, sel string) {
		t.Helper()
		if n := eval[int](p, `document.querySelectorAll("`+sel+` script, `+sel+` img, #bold").length`); n != 0 {
			t.Fatalf("%s: %d elements came from plugin text", where, n)
		}
		if pwned := eval[bool](p, `window.__pwned !== undefined`); pwned {
			t.Fatalf("%s: plugin text ran", where)
		}
		text := run(p, chromedp.TextContent(chromedp.CSS(sel)))
		for _, want := range []string{`<script>window.__pwned=1</script>`, `<img src=x onerror="window.__pwned=2">`, `\x1b[31mRED`, `\x1b]8;;http://evil.example\x07link`, `\u202eevil`, `echo "<script>window.__pwned=3</script>"`} {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not show %q as text:\n%s", where, want, text)
			}
		}
		if strings.ContainsAny(text, "\x1b\x07\u202e") {
			t.Errorf("%s holds a raw escape or bidi character", where)
		}
	}
	check("the plan", "#plan")
	p.shot("add-inert")

	p.click("#install-button")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)
	p.showInstalled()
	p.click(`#installed-list article[data-name="inert"] .expander`)
	p.visible(`#installed-list article[data-name="inert"] .prow-body`)
	check("the Installed row", "#installed-list")
	p.shot("installed-inert")
	// The remove confirmation names the plugin as text too.
	p.click(`#installed-list article[data-name="inert"] button[data-action="remove"]`)
	p.visible("#confirm")
	p.click("#confirm-cancel")
	if pwned := eval[bool](p, `window.__pwned !== undefined`); pwned {
		t.Fatal("plugin text ran")
	}
}

// attackPage tries every way a page of another origin has to make the
// daemon act for a signed-in browser, and writes what each attempt got.
const attackPage = `<!doctype html><html><body>
<pre id="out"></pre>
<form id="f" method="POST" action="DAEMON/plugins/enabled" enctype="text/plain" target="sink">
<input name='{"name":"victim","enabled":false,"x":"' value='"}'></form>
<iframe name="sink"></iframe>
<iframe id="framed" src="DAEMON/"></iframe>
<script>
const D = "DAEMON";
const results = {};
async function attempt(name, fn) {
  try { results[name] = String(await fn()); } catch (e) { results[name] = "error: " + e.name; }
}
(async () => {
  const body = JSON.stringify({name: "victim", enabled: false});
  await attempt("simple-post", async () => {
    const r = await fetch(D + "/plugins/enabled", {method: "POST", credentials: "include", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body});
    return r.type;
  });
  await attempt("read-page-token", async () => localStorage.getItem("reasonix.pageToken"));
  await attempt("post-with-page-token-header", async () => {
    const r = await fetch(D + "/plugins/enabled", {method: "POST", credentials: "include", headers: {"Content-Type": "application/json", "X-Reasonix-Page-Token": "guess"}, body});
    return r.status;
  });
  await attempt("delete", async () => (await fetch(D + "/plugins/victim", {method: "DELETE", credentials: "include"})).status);
  await attempt("read-session", async () => await (await fetch(D + "/session", {credentials: "include"})).text());
  await attempt("read-plugins", async () => await (await fetch(D + "/plugins", {credentials: "include"})).text());
  await attempt("reload-beacon", async () => navigator.sendBeacon(D + "/extensions/reload", "x"));
  await attempt("remove-no-cors", async () => (await fetch(D + "/plugins/victim", {method: "POST", credentials: "include", mode: "no-cors"})).type);
  document.getElementById("f").submit();
  await new Promise(r => setTimeout(r, 700));
  await attempt("frame", async () => { const d = document.getElementById("framed").contentDocument; return d ? "readable: " + d.body.innerText : "unreadable"; });
  document.getElementById("out").textContent = JSON.stringify(results);
  document.body.dataset.done = "1";
})();
</script></body></html>`

// TestBrowserCrossOriginCannotMutate: a page on another loopback port (the
// same site, so the SameSite=Strict cookie rides along) tries every way a
// page has to drive the daemon of a signed-in browser. Nothing changes, and
// it reads nothing.
func TestBrowserCrossOriginCannotMutate(t *testing.T) {
	e := newEnv(t, envOpts{})
	src := plugin(t, t.TempDir(), "victim", "1.0.0")
	if r := e.installByPlanID(e.plan(installer.Request{Source: mustSource(src)}).PlanID); r.status != 200 {
		t.Fatalf("install: %s", r.body)
	}
	before := e.registryBytes()
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, strings.ReplaceAll(attackPage, "DAEMON", e.ts.URL))
	}))
	t.Cleanup(attacker.Close)

	p := newTab(t, e)
	p.signIn()
	p.do(chromedp.Navigate(attacker.URL))
	p.until("the attack to finish", `document.body.dataset.done === "1"`)
	var results map[string]string
	if err := json.Unmarshal([]byte(p.text("#out")), &results); err != nil {
		t.Fatal(err)
	}
	t.Logf("attempts: %v", results)
	for name, got := range results {
		if strings.Contains(got, "victim") || strings.HasPrefix(got, "readable") || got == "200" || (name == "read-page-token" && got != "null") {
			t.Errorf("%s: the other origin got %q", name, got)
		}
	}
	if !bytes.Equal(e.registryBytes(), before) {
		t.Fatalf("a page of another origin changed the registry:\n%s", e.registryBytes())
	}
	// The cookie did reach the daemon (a 403, not a 401): it is the
	// origin checks that refused.
	refused := 0
	for _, line := range strings.Split(e.log.String(), "\n") {
		if strings.Contains(line, `"path":"/plugins/enabled"`) && strings.Contains(line, `"status":403`) {
			refused++
		}
	}
	if refused == 0 {
		t.Fatalf("no refused POST /plugins/enabled in the log:\n%s", e.log.String())
	}

	// The signed-in page itself still works.
	p.open("/#installed")
	p.visible(`#installed-list article[data-name="victim"]`)
}

// TestBrowserKeyboard: the whole flow works from the keyboard: Enter plans,
// Enter installs, a tab link, a row expander, and the Remove dialog, which
// opens on Cancel and closes with Escape.
func TestBrowserKeyboard(t *testing.T) {
	e := newEnv(t, envOpts{})
	src := plugin(t, t.TempDir(), "keys", "1.0.0")
	p := newTab(t, e)
	p.signIn()
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), src+"\n"))
	p.visible(`#plan-cards article[data-name="keys"]`)
	if got := eval[string](p, `document.activeElement.id`); got != "plan-title" {
		t.Errorf("after planning, focus is on %q, want the plan's heading", got)
	}
	press := func(sel, key string) {
		t.Helper()
		p.do(chromedp.Focus(chromedp.CSS(sel)), chromedp.KeyEvent(key))
	}
	press("#install-button", "\r")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)
	if got := eval[string](p, `document.activeElement.id`); got != "install-result" {
		t.Errorf("after installing, focus is on %q, want the result", got)
	}
	press(`#tabs a[data-screen="installed"]`, "\r")
	p.visible(`#installed-list article[data-name="keys"]`)
	press(`#installed-list article[data-name="keys"] .expander`, " ")
	p.visible(`#installed-list article[data-name="keys"] .prow-body`)
	if got := eval[bool](p, `document.activeElement.classList.contains("expander")`); !got {
		t.Error("focus left the expander when the row opened")
	}
	press(`#installed-list article[data-name="keys"] button[data-action="remove"]`, "\r")
	p.visible("#confirm")
	if got := eval[string](p, `document.activeElement.id`); got != "confirm-cancel" {
		t.Errorf("the Remove dialog opened with focus on %q, want Cancel", got)
	}
	p.do(chromedp.KeyEvent(kb.Escape))
	p.do(chromedp.WaitNotVisible(chromedp.CSS("#confirm")))
	if _, ok := e.installed()["keys"]; !ok {
		t.Fatal("Escape removed the plugin")
	}
	press(`#installed-list article[data-name="keys"] button[data-action="remove"]`, "\r")
	p.visible("#confirm")
	press("#confirm-ok", "\r")
	p.until("the row gone", `document.querySelector('#installed-list article[data-name="keys"]') === null`)
	if _, ok := e.installed()["keys"]; ok {
		t.Fatal("keyboard Remove did not remove")
	}
}
