package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserShowsUnpinnedRuntimeFetches: a plan whose plugin runs code
// fetched at run time without a pin shows each such command on its card,
// apart and open, and names the plugin right above the Install button;
// the plugin's text is shown as text, never as markup.
func TestBrowserShowsUnpinnedRuntimeFetches(t *testing.T) {
	e := newEnv(t, envOpts{})
	p := newTab(t, e)
	p.signIn()
	src := writeTree(t, filepath.Join(t.TempDir(), "fetcher"), map[string]string{
		".claude-plugin/plugin.json": `{"name":"fetcher","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: s\n---\n",
		".mcp.json": `{"mcpServers": {
			"loose": {"command": "npx", "args": ["-y", "@scope/server@latest"]},
			"marked": {"command": "uvx", "args": ["<img src=x onerror=window.pwned=1>"]},
			"pinned": {"command": "uvx", "args": ["tool==1.2.3"]},
			"api": {"type": "http", "url": "https://api.example.test/mcp"}
		}}`,
	})
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), src))
	p.click("#plan-button")
	p.visible("#install-button")
	p.visible(".runtime-fetches")
	box := p.text(".runtime-fetches")
	for _, want := range []string{"Runs unpinned code fetched at run time", "npx -y @scope/server@latest (mcpServer loose)", "uvx '<img src=x onerror=window.pwned=1>' (mcpServer marked)"} {
		if !strings.Contains(box, want) {
			t.Errorf("the card's run-time fetches lack %q: %q", want, box)
		}
	}
	if n := eval[int](p, `document.querySelectorAll(".runtime-fetches ul.unpinned li").length`); n != 2 {
		t.Errorf("%d unpinned fetches shown, want 2 (the pinned one and the remote service are apart)", n)
	}
	if n := eval[int](p, `document.querySelectorAll(".runtime-fetches img").length`); n != 0 || eval[bool](p, `window.pwned === 1`) {
		t.Errorf("the plugin's text became markup")
	}
	if bar := p.text("#install-button-bar .approve-fetches"); !strings.Contains(bar, "fetcher run code that no pin fixes") {
		t.Errorf("the approval does not name the plugin: %q", bar)
	}
	p.shot("runtime-fetches")
}
