package secrets

import (
	"strings"
	"testing"
)

// Before one rule, text (errors, logs, manifests' URLs and commands) was
// masked by the lexical scanner, and a refused source by a URL-shaped rule
// of its own. Where they disagreed the stricter won; these are the cases
// whose output changed, with what each old rule showed.
func TestMaskWhereTheOldRulesDisagreed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		wasText   string // the old text rule
		wasSource string // the old source rule
		want      string
		hidden    string // what must not be shown
	}{
		{"every query value", "https://h/p?access_token=abc&team=core",
			"https://h/p?access_token=***&team=core", "https://h/p?access_token=***&team=***",
			"https://h/p?access_token=***&team=***", "core"},
		{"unnamed query values", "https://github.com/acme/tools?code=4-0AX4XfWh&state=xyz",
			"https://github.com/acme/tools?code=4-0AX4XfWh&state=xyz", "https://github.com/acme/tools?code=***&state=***",
			"https://github.com/acme/tools?code=***&state=***", "4-0AX4XfWh"},
		{"a bare query", "https://github.com/acme/tools?s3cr3t",
			"https://github.com/acme/tools?s3cr3t", "https://github.com/acme/tools?***",
			"https://github.com/acme/tools?***", "s3cr3t"},
		{"fragment parameters", "https://h/cb#access_token=xyz&state=1",
			"https://h/cb#access_token=***&state=1", "https://h/cb#access_token=***&state=***",
			"https://h/cb#access_token=***&state=***", "state=1"},
		{"a path-like source's query", "acme/tools?x=s3cr3t",
			"acme/tools?x=s3cr3t", "acme/tools?x=***",
			"acme/tools?x=***", "s3cr3t"},
		{"a credential parameter runs to its '&'", "https://h/p?token=abc;def&x",
			"https://h/p?token=***;def&x", "https://h/p?token=***&***",
			"https://h/p?token=***&***", "def"},
		{"a hook command's query", `curl "https://hooks.example.com/notify?token=abc&event=write"`,
			`curl "https://hooks.example.com/notify?token=***&event=write"`, "",
			`curl "https://hooks.example.com/notify?token=***&event=***"`, "write"},
		{"scp-like password", "alice:s3cr3t-pw@github.com:acme/tools.git",
			"alice:s3cr3t-pw@github.com:acme/tools.git", "alice:***@github.com:acme/tools.git",
			"alice:***@github.com:acme/tools.git", "s3cr3t-pw"},
		{"a quote in a URL password", "https://u:pa'ss@github.com/a/b",
			"https://u:pa'ss@github.com/a/b", "https://***@github.com/a/b",
			"https://***@github.com/a/b", "pa'ss"},
		{"a token in a source's path", "https://github.com/ghp_0123456789abcdefghij/x",
			"https://github.com/***/x", "https://github.com/ghp_0123456789abcdefghij/x",
			"https://github.com/***/x", "ghp_"},
		{"a bare token as a source", "ghp_0123456789abcdefghij",
			"***", "ghp_0123456789abcdefghij",
			"***", "ghp_"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Mask(tc.in)
			if got != tc.want {
				t.Errorf("Mask(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if strings.Contains(got, tc.hidden) {
				t.Errorf("Mask(%q) = %q shows %q", tc.in, got, tc.hidden)
			}
			if tc.wasText == tc.want && (tc.wasSource == "" || tc.wasSource == tc.want) {
				t.Errorf("%q: the table claims no change", tc.in)
			}
		})
	}
}

// The two policies share the detection: whatever export moves, display
// hides; what display hides only for its place in a URL, export leaves.
func TestPoliciesShareOneDetection(t *testing.T) {
	t.Parallel()
	s := `curl -u a:b "https://u:p@h/x?access_token=t0k&team=core#sig=z" --password hunter2 me:pw@git.example.com:x.git ghp_0123456789abcdefghij`
	covered := func(sp secret, in []secret) bool {
		for _, d := range in {
			if d.Start <= sp.Start && sp.End <= d.End {
				return true
			}
		}
		return false
	}
	shown, moved := find(s, display), find(s, export)
	for _, e := range moved {
		if !covered(e, shown) {
			t.Errorf("export moves %q, which display shows", s[e.Start:e.End])
		}
	}
	var left []string
	for _, d := range shown {
		if !covered(d, moved) {
			left = append(left, s[d.Start:d.End])
		}
	}
	if want := []string{"core", "pw"}; strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("display-only spans %q, want %q", left, want)
	}
}
