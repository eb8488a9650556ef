package server

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// sibling opens another tab in p's browser context: the same cookies and
// the same storage, as a second tab of one browser.
func (p *tab) sibling() *tab {
	p.t.Helper()
	ctx, cancel := chromedp.NewContext(p.ctx)
	p.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		p.t.Fatalf("open a second tab: %v", err)
	}
	s := &tab{t: p.t, e: p.e, ctx: ctx}
	s.wide()
	return s
}

// TestBrowserTabsShareSignIn: tabs of one browser share the newest
// sign-in (a second sign-in does not break the first tab), and a tab left
// holding a replaced session's page token says so plainly, with a reload.
func TestBrowserTabsShareSignIn(t *testing.T) {
	e := newEnv(t, envOpts{})
	first := newTab(t, e)
	first.signIn()
	oldToken := eval[string](first, `localStorage.getItem("reasonix.pageToken")`)

	// A tab opened later is signed in by the same sign-in.
	second := first.sibling()
	second.open("/#installed")
	second.visible("#screen-installed")

	// A newer sign-in (in the second tab) ends the first session; the
	// first tab goes on with the newer one, without a reload.
	second.signIn()
	newToken := eval[string](second, `localStorage.getItem("reasonix.pageToken")`)
	if newToken == oldToken {
		t.Fatal("the second sign-in kept the page token")
	}
	first.click(`#tabs a[data-screen="installed"]`)
	first.visible("#screen-installed")
	first.until("the list loaded", `document.getElementById("installed-notice").hidden`)
	if !eval[bool](first, `document.getElementById("screen-signin").hidden`) {
		t.Fatalf("the first tab was signed out by the second sign-in: %s", first.bodyText())
	}

	// A tab that still holds the replaced session's page token (as one
	// with no shared storage would) is told why, and offered a reload.
	// The next request it makes finds the session replaced: the tab
	// switch below, or a background refresh that comes first and has
	// already hidden the tabs, so the switch is made by script (a pointer
	// click needs the tab on screen).
	first.do(chromedp.Evaluate[chromedp.Void](`localStorage.setItem("reasonix.pageToken", ` + jsString(oldToken) + `)`))
	first.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#tabs a[data-screen="add"]').click()`))
	first.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#tabs a[data-screen="installed"]').click()`))
	first.visible("#screen-signin")
	if got := first.text("#signin-reason"); got != "Signed out by a newer sign-in — reload" {
		t.Fatalf("a replaced tab says %q", got)
	}
	first.visible("#signin-reload")
	first.shot("signin-replaced")
}

// TestBrowserSignInsCoexist: sign-ins in two browsers (say, two browser
// profiles, each opened by `reasonix studio`) are two sessions: a second
// sign-in leaves the first browser signed in, and each acts on its own —
// none of them hears about a header it cannot set.
func TestBrowserSignInsCoexist(t *testing.T) {
	e := newEnv(t, envOpts{})
	src := plugin(t, t.TempDir(), "shared", "1.0.0")
	first := newTab(t, e)
	first.signIn()
	second := newTab(t, e)
	second.signIn()
	third := second.sibling() // a second tab of the second browser
	third.open("/#installed")
	third.visible("#screen-installed")

	// The first browser plans and installs after the others signed in.
	first.do(chromedp.SendKeys(chromedp.CSS("#source"), src))
	first.click("#plan-button")
	first.visible(`#plan-cards article[data-name="shared"]`)
	first.click("#install-button")
	first.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)

	// The second browser sees it and acts on it.
	second.showInstalled()
	second.click(`#installed-list article[data-name="shared"] .expander`)
	second.click(`#installed-list article[data-name="shared"] button[data-action="toggle"]`)
	second.until("shared disabled", `document.getElementById("installed-notice").textContent.includes("Disabled shared")`)
	first.showInstalled()
	if got := first.text(`#installed-list article[data-name="shared"] .prow-head`); !strings.Contains(got, "disabled") {
		t.Errorf("the first browser's list: %q", got)
	}
	for i, p := range []*tab{first, second, third} {
		if !eval[bool](p, `document.getElementById("screen-signin").hidden`) {
			t.Errorf("browser tab %d was signed out: %s", i, p.bodyText())
		}
		if text := p.bodyText(); strings.Contains(text, "X-Reasonix") {
			t.Errorf("browser tab %d speaks of a header: %s", i, text)
		}
	}
}
