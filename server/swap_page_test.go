package server

import (
	"context"
	"strings"
	"testing"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
)

// TestBrowserUpdateShowsARepositorySwap (issue 21, item 4): the
// marketplace q came from now points its entry at evil/q, whose plugin
// contributes the same. The page's update review says so on its own line,
// above the (empty) list of changes, with the risk raised.
func TestBrowserUpdateShowsARepositorySwap(t *testing.T) {
	gh := fakegithub.New(t)
	plugin := map[string]string{
		".claude-plugin/plugin.json": `{"name":"q","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: q\n---\n",
	}
	good := gh.CreateRepo("acme", "q").Commit("main", plugin)
	plugin["README.md"] = "other hands\n"
	bad := gh.CreateRepo("evil", "q").Commit("main", plugin)
	market := gh.CreateRepo("acme", "market")
	entry := func(repo, sha string) map[string]string {
		return map[string]string{".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"acme"},"plugins":[` +
			`{"name":"q","source":{"source":"github","repo":"` + repo + `","sha":"` + sha + `"}}]}`}
	}
	market.Commit("main", entry("acme/q", good))
	e := newEnv(t, envOpts{gh: gh})
	if _, err := e.in.Install(context.Background(), installer.Request{Source: mustSource("https://github.com/acme/market")}, installer.Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	market.Commit("main", entry("evil/q", bad))

	p := newTab(t, e)
	p.signIn()
	p.showInstalled()
	p.click(`#installed-list article[data-name="q"] .expander`)
	p.click(`#installed-list article[data-name="q"] button[data-action="update"]`)
	p.visible(`#installed-update-cards article[data-name="q"] .source-move`)
	move := p.text(`#installed-update-cards article[data-name="q"] .source-move`)
	for _, want := range []string{"Moves to another source (owner changes)", "github.com/acme/q", "github.com/evil/q"} {
		if !strings.Contains(move, want) {
			t.Errorf("the move line lacks %q: %q", want, move)
		}
	}
	card := p.text(`#installed-update-cards article[data-name="q"]`)
	for _, want := range []string{"medium risk", "was low", "What it contributes stays the same."} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	p.shot("installed-update-swap")
	if e.installed()["q"].Commit != good {
		t.Fatal("reviewing the update changed the registry")
	}
}
