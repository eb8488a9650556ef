package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	const doc = `{
		"allow": ["github.com/acme", "git.example.test", "github.com/friends/tools.git"],
		"block": ["github.com/acme/secret", "git.example.test/evil"]
	}`
	p, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key     string
		allowed bool
		rule    string
		list    string
	}{
		{"github.com/acme/tools", true, "github.com/acme", "allow"},
		{"github.com/ACME/Tools", true, "github.com/acme", "allow"},
		{"github.com/acme/secret", false, "github.com/acme/secret", "block"},
		{"github.com/Acme/SECRET", false, "github.com/acme/secret", "block"},
		{"github.com/acme/secret-not", true, "github.com/acme", "allow"}, // whole segments only
		{"github.com/friends/tools", true, "github.com/friends/tools.git", "allow"},
		{"github.com/friends/other", false, "", "allow"},
		{"github.com/acmecorp/x", false, "", "allow"},
		{"git.example.test/team/sub/tools", true, "git.example.test", "allow"},
		{"git.example.test/evil/x", false, "git.example.test/evil", "block"},
		{"gitlab.com/acme/tools", false, "", "allow"},
	} {
		d := p.Check(tc.key)
		if d.Allowed != tc.allowed || d.Rule != tc.rule || d.List != tc.list {
			t.Errorf("%s: %+v, want allowed=%v rule=%q list=%q", tc.key, d, tc.allowed, tc.rule, tc.list)
		}
		if !d.Allowed {
			r := d.Reason(tc.key)
			if !strings.Contains(r, tc.key) || (tc.rule != "" && !strings.Contains(r, `"`+tc.rule+`"`)) {
				t.Errorf("%s: reason %q should name the repository and the rule", tc.key, r)
			}
		}
	}
}

func TestEmptyAllowAllowsAllButBlocked(t *testing.T) {
	t.Parallel()
	p, err := Parse([]byte(`{"block": ["github.com/bad"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Check("gitlab.com/x/y"); !d.Allowed || d.Rule != "" {
		t.Fatalf("%+v", d)
	}
	if d := p.Check("github.com/bad/y"); d.Allowed || d.Rule != "github.com/bad" {
		t.Fatalf("%+v", d)
	}
	var none *Policy
	if d := none.Check("github.com/bad/y"); !d.Allowed {
		t.Fatal("no policy must allow everything")
	}
}

func TestParseRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ doc, want string }{
		{`{"alow": []}`, "unknown field"},
		{`{"allow": [""]}`, "allow[0]: empty rule"},
		{`{"block": ["https://github.com/x"]}`, "scheme"},
		{`{"block": ["github.com/a/b/c"]}`, "4 segments"},
		{`{"block": ["github.com//b"]}`, "empty"},
		{`{"block": ["github.com/../b"]}`, `".."`},
		{`{"block": ["acme/tools"]}`, "host name"},
		{`{"block": ["github.com/a b"]}`, "whitespace"},
		{`{"block": ["user@github.com"]}`, "host name"},
		{`{"block": ["127.0.0.1/x"]}`, "IP address"},
		{`{"block": ["ex!ample.test"]}`, "not a valid host name"},
		{`{"block": ["git.example.test/bücher"]}`, "can match no source"},
		{`{"block": ["github.com/-acme"]}`, "can match no source"},
		{"{\"block\": [\"git.\xff.example\"]}", "not a valid host name"},
		{`{"allow": []} {}`, "trailing"},
		{`[1]`, "not a policy document"},
	} {
		_, err := Parse([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.doc, err, tc.want)
		}
	}
}

// Hosts in rules are spelled as sources spell them (IDNA), so a rule an
// operator writes in Unicode matches the punycode key of the source, and
// any spelling of one host is one rule.
func TestUnicodeHostsMatchTheirPunycode(t *testing.T) {
	t.Parallel()
	for _, rule := range []string{"bücher.example", "BÜCHER.example", "xn--bcher-kva.example", "ｂücher.example"} {
		p, err := Parse([]byte(`{"block": ["` + rule + `/acme"]}`))
		if err != nil {
			t.Fatalf("%s: %v", rule, err)
		}
		for _, key := range []string{"xn--bcher-kva.example/acme/tools", "xn--bcher-kva.example/ACME/x"} {
			if d := p.Check(key); d.Allowed || d.Rule != rule+"/acme" {
				t.Errorf("rule %q, source %s: %+v, want blocked by the rule", rule, key, d)
			}
		}
		if d := p.Check("bucher.example/acme/tools"); !d.Allowed {
			t.Errorf("rule %q blocks another host: %+v", rule, d)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(good, []byte(`{"allow": ["github.com/acme"], "block": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := p.Rules(); a != 1 || b != 0 {
		t.Fatalf("rules %d/%d", a, b)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("missing file: %v", err)
	}
}
