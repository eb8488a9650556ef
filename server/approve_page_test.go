package server

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
)

// runtimePlugin writes a native plugin named name with a FULL TRUST
// runtime and returns its (absolute) folder.
func runtimePlugin(t *testing.T, parent, name string) string {
	t.Helper()
	return writeTree(t, filepath.Join(parent, name), map[string]string{
		"reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2","name":"` + name + `","version":"1.0.0","description":"runs a sidecar",` +
			`"contributes":{"skills":["skills"]},"runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/sidecar","args":["--serve"],"capabilities":["tools"]}}`,
		"skills/notes/SKILL.md": "---\nname: notes\ndescription: Keep notes\n---\nNotes.\n",
		"bin/sidecar":           fakegithub.Executable("#!/bin/sh\nexit 0\n"),
	})
}

// trustGeometry is where the approval's FULL TRUST blocks and its button
// are on the screen.
type trustGeometry struct {
	Blocks      int     `json:"blocks"`
	FirstTop    float64 `json:"firstTop"`
	LastBottom  float64 `json:"lastBottom"`
	ButtonTop   float64 `json:"buttonTop"`
	ButtonBot   float64 `json:"buttonBottom"`
	Viewport    float64 `json:"viewport"`
	Width       float64 `json:"width"`
	ScrollY     float64 `json:"scrollY"`
	CoversBlock bool    `json:"coversBlock"` // something else lies on top of a block
}

func (g trustGeometry) String() string {
	return fmt.Sprintf("%d blocks %.0f–%.0f, button %.0f–%.0f, viewport %.0f×%.0f at scrollY %.0f, covered %v",
		g.Blocks, g.FirstTop, g.LastBottom, g.ButtonTop, g.ButtonBot, g.Width, g.Viewport, g.ScrollY, g.CoversBlock)
}

// inView holds when every block lies above the button and all of them in
// the window.
func (g trustGeometry) inView() bool {
	return g.Blocks > 0 && g.FirstTop >= 0 && g.LastBottom <= g.ButtonTop && g.ButtonBot <= g.Viewport && !g.CoversBlock
}

func (p *tab) trustGeometry(button string) trustGeometry {
	p.t.Helper()
	return eval[trustGeometry](p, `(() => {
		const b = document.getElementById(`+jsString(button)+`).getBoundingClientRect();
		const blocks = Array.from(document.querySelectorAll("#"+`+jsString(button)+`+"-bar .fulltrust"));
		const rs = blocks.map((x) => x.getBoundingClientRect());
		// The block is seen only if nothing is drawn over its middle.
		const covered = blocks.some((x, i) => {
			const r = rs[i];
			const hit = document.elementFromPoint(r.left + r.width / 2, r.top + Math.min(r.height / 2, 10));
			return !hit || !x.contains(hit);
		});
		return {blocks: rs.length, firstTop: rs.length ? Math.min(...rs.map((r) => r.top)) : -1,
			lastBottom: rs.length ? Math.max(...rs.map((r) => r.bottom)) : -1,
			buttonTop: b.top, buttonBottom: b.bottom, viewport: window.innerHeight, width: window.innerWidth,
			scrollY: window.scrollY, coversBlock: covered};
	})()`)
}

// TestBrowserFullTrustAboveInstall: a plan with a FULL TRUST runtime puts
// the block right above the Install button, which says what it trusts,
// and both are on the first screen of a 1280×800 window — scrolled to the
// top as the plan appears, and wherever the review is scrolled to (the
// approval stays in view).
func TestBrowserFullTrustAboveInstall(t *testing.T) {
	fx := newMarketFixture(t)
	e := newEnv(t, envOpts{gh: fx.gh})
	p := newTab(t, e)
	p.signIn()
	if w, h := eval[float64](p, `window.innerWidth`), eval[float64](p, `window.innerHeight`); w != 1280 || h != 800 {
		t.Fatalf("the window is %.0f×%.0f, want 1280×800", w, h)
	}

	// One plugin with a runtime.
	src := runtimePlugin(t, t.TempDir(), "sidecar")
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), src))
	p.click("#plan-button")
	p.visible("#install-button")
	if got := p.text("#install-button"); got != "Install and trust sidecar" {
		t.Errorf("the Install button of a FULL TRUST plan says %q", got)
	}
	for _, scroll := range []string{"window.scrollTo(0, 0)", "window.scrollTo(0, document.body.scrollHeight)"} {
		p.do(chromedp.Evaluate[chromedp.Void](scroll))
		if g := p.trustGeometry("install-button"); !g.inView() {
			t.Errorf("after %s the FULL TRUST block is not above the button in view: %v", scroll, g)
		}
	}
	block := p.text("#install-button-bar .fulltrust")
	for _, want := range []string{"FULL TRUST", "sidecar runs", "${REASONIX_PLUGIN_ROOT}/bin/sidecar --serve", "outside the sandbox"} {
		if !strings.Contains(block, want) {
			t.Errorf("the approval's FULL TRUST block lacks %q: %q", want, block)
		}
	}
	p.shot("approve-fulltrust-one")

	// A marketplace: three cards push the button far down the review; the
	// approval stays on the first screen, naming the one runtime.
	p.do(chromedp.SetValue(chromedp.CSS("#source"), fx.source))
	p.click("#plan-button")
	p.visible(`#plan-cards article[data-name="gamma"]`)
	if got := p.text("#install-button"); got != "Install 3 plugins and trust beta" {
		t.Errorf("the Install button of the marketplace plan says %q", got)
	}
	if h := eval[float64](p, `document.documentElement.scrollHeight`); h <= 800 {
		t.Fatalf("the review is %.0f px tall: too short to test that the approval stays in view", h)
	}
	for _, scroll := range []string{"window.scrollTo(0, 0)", "window.scrollTo(0, 400)", "window.scrollTo(0, document.body.scrollHeight)"} {
		p.do(chromedp.Evaluate[chromedp.Void](scroll))
		g := p.trustGeometry("install-button")
		if !g.inView() || g.Blocks != 1 {
			t.Errorf("after %s: %v", scroll, g)
		}
		t.Logf("marketplace plan, %s: %v", scroll, g)
	}
	p.do(chromedp.Evaluate[chromedp.Void]("window.scrollTo(0, 0)"))
	p.shot("approve-fulltrust-market")

	// Without beta, nothing is trusted and the button says so.
	p.click(`#plan-cards input[data-name="beta"]`)
	p.click("#review-selection")
	p.until("the narrowed plan", `document.getElementById("install-button").textContent === "Install 2 plugins"`)
	if n := eval[int](p, `document.querySelectorAll("#install-button-bar .fulltrust").length`); n != 0 {
		t.Errorf("a plan without a runtime shows %d FULL TRUST blocks at its button", n)
	}

	// An update of a plugin with a runtime trusts its new code: the same
	// block above "Update and trust …".
	plan := e.plan(installer.Request{Source: mustSource(src)})
	if r := e.installByPlanID(plan.PlanID); r.status != 200 {
		t.Fatalf("install sidecar: %d %s", r.status, r.body)
	}
	writeTree(t, src, map[string]string{"skills/more/SKILL.md": "---\nname: more\ndescription: More notes\n---\nMore.\n"})
	p.showInstalled()
	p.click(`#installed-list article[data-name="sidecar"] .expander`)
	p.click(`#installed-list article[data-name="sidecar"] button[data-action="update"]`)
	p.visible("#installed-apply")
	if got := p.text("#installed-apply"); got != "Update and trust sidecar" {
		t.Errorf("the Apply button of an update with a runtime says %q", got)
	}
	p.do(chromedp.Evaluate[chromedp.Void]("window.scrollTo(0, 0)"))
	if g := p.trustGeometry("installed-apply"); !g.inView() {
		t.Errorf("the update's FULL TRUST block: %v", g)
	}
	p.shot("approve-fulltrust-update")
}
