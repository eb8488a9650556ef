package source

import "testing"

// TestSuggest: what a string read as a local path most likely meant, only
// for the shapes of a remote repository.
func TestSuggest(t *testing.T) {
	for raw, want := range map[string]string{
		"acme/tools":                "git:github.com/acme/tools",
		"acme/tools.git":            "git:github.com/acme/tools",
		"github.com/acme/tools":     "git:github.com/acme/tools",
		"www.github.com/acme/tools": "git:github.com/acme/tools",
		"git.example.test/team/x":   "https://git.example.test/team/x.git",
		"tools":                     "",
		"./acme/tools":              "",
		"a/b/c":                     "",
		"acme-/tools":               "", // GitHub's name rules, as a source is parsed
		"acme/..":                   "",
		"acme--x/tools":             "",
	} {
		if got := Suggest(raw); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", raw, got, want)
		}
	}
	if got := SuggestHint("tools"); got != " (sources are "+Forms+")" {
		t.Errorf("SuggestHint without a suggestion: %q", got)
	}
}
