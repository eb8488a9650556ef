package server

import (
	"context"
	"strings"
	"testing"
)

// TestBrowserUpdateNotice: after the background check found a move, the
// Installed tab says how many updates and when it checked, badges the row
// with its version and risk raise, and the badge opens the update review
// (with its diff), which still waits for approval.
func TestBrowserUpdateNotice(t *testing.T) {
	fx := newCheckFixture(t)
	fx.moveOn()
	if c, err := fx.e.in.CheckUpdates(context.Background(), false); err != nil || len(c.Updates) != 1 {
		t.Fatalf("check: %+v %v", c, err)
	}
	before := fx.e.registryBytes()
	p := newTab(t, fx.e)
	p.signIn()
	p.showInstalled()
	p.visible("#installed-updates")
	if got := p.text("#updates-count"); !strings.Contains(got, "1 update available: tools") || !strings.Contains(got, "last checked") {
		t.Errorf("the notice says %q", got)
	}
	badge := `#installed-list article[data-name="tools"] button[data-action="review-update"]`
	if got := p.text(badge); got != "update to v2.0.0, risk low → medium" {
		t.Errorf("the row's badge says %q", got)
	}
	p.noFlags("with an update notice")
	p.shot("update-notice")
	p.click(badge)
	p.until("the update review", `!!document.querySelector("#installed-update-cards")`)
	if got := p.text("#installed-update-cards"); !strings.Contains(got, "PreToolUse") {
		t.Errorf("the review lacks the added hook: %q", got)
	}
	if string(fx.e.registryBytes()) != string(before) {
		t.Fatal("the notice or its review applied something")
	}
	if _, ok := fx.e.installed()["tools"]; !ok {
		t.Fatal("tools is gone")
	}
}
