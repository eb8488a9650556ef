package host

import (
	"strings"
	"testing"
)

// TestRewriteApply: like git's url.<TO>.insteadOf, the longest matching
// prefix wins whatever the order of the rules, and a URL no rule matches
// is left alone.
func TestRewriteApply(t *testing.T) {
	t.Parallel()
	rw, err := ParseRewrite("https://github.com/=http://127.0.0.1:9000/  https://github.com/acme/=http://127.0.0.1:9001/mirror/\thttps://git.example.test/=https://cache.example.test/git/?via=rewrite")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{"https://github.com/other/tools.git", "http://127.0.0.1:9000/other/tools.git"},
		{"https://github.com/acme/tools.git", "http://127.0.0.1:9001/mirror/tools.git"},
		{"https://github.com/", "http://127.0.0.1:9000/"},
		{"https://git.example.test/team/x.git", "https://cache.example.test/git/?via=rewriteteam/x.git"},
		{"https://gitlab.example.test/team/x.git", "https://gitlab.example.test/team/x.git"},
		{"http://github.com/acme/tools", "http://github.com/acme/tools"}, // another scheme is another prefix
		{"", ""},
	} {
		if got := rw.Apply(tc.in); got != tc.want {
			t.Errorf("Apply(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// The same rules added the other way round give the same answers.
	rev := &Rewrite{}
	rev.Add("https://github.com/acme/", "http://127.0.0.1:9001/mirror/")
	rev.Add("https://github.com/", "http://127.0.0.1:9000/")
	for _, in := range []string{"https://github.com/acme/tools.git", "https://github.com/other/tools.git"} {
		if rev.Apply(in) != rw.Apply(in) {
			t.Errorf("order matters for %q: %q and %q", in, rev.Apply(in), rw.Apply(in))
		}
	}
}

// TestRewriteNone: no rules — an empty setting, or none at all — change
// nothing.
func TestRewriteNone(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"", "   ", "\n\t"} {
		rw, err := ParseRewrite(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		if got := rw.Apply("https://github.com/acme/tools"); got != "https://github.com/acme/tools" {
			t.Errorf("%q rewrote to %q", spec, got)
		}
	}
	var none *Rewrite
	if got := none.Apply("https://github.com/acme/tools"); got != "https://github.com/acme/tools" {
		t.Errorf("a nil Rewrite rewrote to %q", got)
	}
}

// TestParseRewriteRefuses: a rule that is not FROM=TO with both sides
// URLs is refused naming the setting and the rule, a credential in it
// masked.
func TestParseRewriteRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec, names string
	}{
		{"https://github.com/", `"https://github.com/"`},
		{"=http://127.0.0.1:9000/", `"=http://127.0.0.1:9000/"`},
		{"https://github.com/=", `"https://github.com/="`},
		{"github.com=127.0.0.1:9000", `"github.com=127.0.0.1:9000"`},
		{"https://github.com/=127.0.0.1:9000", `"https://github.com/=127.0.0.1:9000"`},
		{"https://github.com/=http://127.0.0.1:9000/ broken", `"broken"`},
		{"https://bot:s3cret-token@mirror.example.test/", `"https://***@mirror.example.test/"`},
		{"mirror=https://bot:s3cret-token@mirror.example.test/", `"mirror=https://***@mirror.example.test/"`},
		{"https://github.com/=https://mirror.example.test/?access_token=s3cret-token x", `"x"`},
	} {
		rw, err := ParseRewrite(tc.spec)
		if err == nil {
			t.Errorf("%q: accepted (%+v)", tc.spec, rw)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "REASONIX_URL_REWRITE: ") || !strings.Contains(msg, tc.names) {
			t.Errorf("%q: %q does not name the setting and %s", tc.spec, msg, tc.names)
		}
		if strings.Contains(msg, "s3cret") {
			t.Errorf("%q: the credential is in the error: %q", tc.spec, msg)
		}
	}
}
