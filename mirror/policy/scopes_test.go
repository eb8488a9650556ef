package policy

import (
	"slices"
	"strings"
	"testing"
)

// Scopes match as allow rules do — whole segments, case-insensitively,
// hosts in IDNA form, a trailing ".git" dropped — so no spelling of a name
// reaches past them.
func TestScopesAllow(t *testing.T) {
	t.Parallel()
	sc, err := ParseScopes([]string{"GitHub.com/Acme", "github.com/friends/tools.git", "bücher.example/team"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Rules(); !slices.Equal(got, []string{"GitHub.com/Acme", "github.com/friends/tools.git", "bücher.example/team"}) {
		t.Errorf("Rules() = %q, want them as written", got)
	}
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"github.com/acme/tools", true},
		{"github.com/ACME/Tools.git", true},
		{"GITHUB.COM/acme/x", true},
		{"github.com/acme-evil/tools", false}, // whole segments only
		{"github.com/acmex/tools", false},
		{"github.com.evil.test/acme/tools", false},
		{"evil.test/github.com/acme", false},
		{"gitlab.com/acme/tools", false},
		{"github.com/friends/tools", true},
		{"github.com/Friends/TOOLS.git", true},
		{"github.com/friends/tools-fork", false},
		{"github.com/friends/other", false},
		{"github.com/friends", false}, // the owner alone is wider than the repository scope
		{"xn--bcher-kva.example/team/tools", true},
		{"xn--bcher-kva.example/other/tools", false},
		{"bucher.example/team/tools", false},
	} {
		if got := sc.Allows(tc.key); got != tc.want {
			t.Errorf("Allows(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
	var none Scopes
	if none.Limited() || !none.Allows("anything.example/o/r") {
		t.Error("no scopes must allow everything the policy allows")
	}
	if empty, err := ParseScopes(nil); err != nil || empty.Limited() {
		t.Errorf("ParseScopes(nil) = %v, %v", empty, err)
	}
}

// A bad scope is refused by the policy's own rule checks, the error naming
// it.
func TestScopesRefuseBadRules(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"https://github.com/acme", "acme/tools", "github.com/a/b/c", "github.com/../x",
		"github.com//x", "github.com/ac me", "git@github.com:acme", "github.com/a\x00b"} {
		_, err := ParseScopes([]string{"github.com/ok", bad})
		if err == nil || !strings.HasPrefix(err.Error(), "scope rule ") || !strings.Contains(err.Error(), strings.Split(bad, "\x00")[0]) {
			t.Errorf("%q: %v, want an error naming the scope", bad, err)
		}
	}
	if _, err := ParseScopes([]string{""}); err == nil || !strings.Contains(err.Error(), "empty rule") {
		t.Errorf("empty scope: %v", err)
	}
}
