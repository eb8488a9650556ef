package fakegithub

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestPktWants(t *testing.T) {
	t.Parallel()
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
	tests := []struct {
		name, body string
		want       []string
	}{
		{"v0", pkt("want "+a+" multi_ack_detailed side-band-64k\n") + pkt("want "+b+"\n") + pkt("deepen 1\n") + "0000" + pkt("done\n"), []string{a, b}},
		{"v2", pkt("command=fetch\n") + pkt("agent=git/2.39\n") + "0001" + pkt("want "+a+"\n") + pkt("done\n") + "0000", []string{a}},
		{"not hex", pkt("want " + strings.Repeat("z", 40) + "\n"), nil},
		{"truncated", pkt("want " + a + "\n")[:20], nil},
		{"garbage", "xyz", nil},
	}
	for _, tt := range tests {
		if got := pktWants([]byte(tt.body)); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: wants = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestQuotePath(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"plain/file.txt":   "plain/file.txt",
		"with space":       "with space",
		`"starts`:          `"\"starts"`,
		"new\nline":        `"new\nline"`,
		"tab\there\\x":     `"tab\there\\x"`,
		"bell\a":           `"bell\007"`,
		"caf\u00e9 inside": "caf\u00e9 inside",
	}
	for in, want := range tests {
		if got := quotePath(in); got != want {
			t.Errorf("quotePath(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCheckRefName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"main", "release/v2", "v1.0", "feature/x-y_z", "a@b"} {
		if err := checkRefName(ok); err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "@", "-x", "a..b", "a b", "a\nb", "x.lock", "a/.b", "a//b", "/a", "a/", "a.", "a@{1}", "a:b", "a~1", "a^", "a?", "a*", "a[", `a\b`} {
		if err := checkRefName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestEtagMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header, etag string
		want         bool
	}{
		{`"abc"`, `"abc"`, true},
		{`W/"abc"`, `"abc"`, true},
		{`"x", "abc"`, `"abc"`, true},
		{`*`, `"abc"`, true},
		{`"abd"`, `"abc"`, false},
		{``, `"abc"`, false},
	}
	for _, tt := range tests {
		if got := etagMatches(tt.header, tt.etag); got != tt.want {
			t.Errorf("etagMatches(%q, %q) = %v", tt.header, tt.etag, got)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "localhost:8080": true, "[::1]:0": true,
		":0": false, "0.0.0.0:80": false, "192.168.1.2:0": false, "example.com:80": false, "nonsense": false,
	} {
		if err := checkLoopback(addr); (err == nil) != ok {
			t.Errorf("checkLoopback(%q) = %v", addr, err)
		}
	}
	if _, err := Start(t.TempDir(), WithAddr("0.0.0.0:0")); err == nil {
		t.Fatal("Start accepted a non-loopback address")
	}
}

// recordingTB collects helper failures instead of stopping the test.
type recordingTB struct{ msgs []string }

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func TestHelperFailuresAreReported(t *testing.T) {
	t.Parallel()
	tb := &recordingTB{}
	s, err := start(t.TempDir(), tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.CreateRepo("acme", "tools")
	sha := r.Commit("main", map[string]string{"a": "1"})
	steps := []struct {
		name string
		do   func()
	}{
		{"duplicate repo", func() { s.CreateRepo("ACME", "tools") }},
		{"bad owner", func() { s.CreateRepo("ac/me", "tools") }},
		{".git name", func() { s.CreateRepo("acme", "x.git") }},
		{"injected branch", func() { r.Commit("x\ncommit refs/heads/evil", map[string]string{"a": "2"}) }},
		{"bad path", func() { r.Commit("main", map[string]string{"/abs": "2"}) }},
		{"tag non-sha", func() { r.Tag("v1", "main") }},
		{"tag unknown sha", func() { r.Tag("v1", strings.Repeat("0", 40)) }},
		{"bad route", func() { s.Fault("nowhere", Fault{Status: 500}) }},
		{"negative times", func() { s.Fault(RouteAPI, Fault{Times: -1}) }},
	}
	for _, st := range steps {
		before := len(tb.msgs)
		st.do()
		if len(tb.msgs) != before+1 {
			t.Errorf("%s: no failure reported", st.name)
		}
	}
	if got := r.Head("main"); got != sha {
		t.Fatalf("main moved to %s after failed helpers", got)
	}
	if _, err := r.resolve(context.Background(), "evil"); err == nil {
		t.Fatal("an injected ref exists")
	}
}

func TestNewlinePathRoundTrips(t *testing.T) {
	t.Parallel()
	s, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.CreateRepo("acme", "tools")
	sha := r.CommitTree("main", []File{{Path: "new\nline", Content: "x"}, {Path: `"q"`, Content: "y"}}, true)
	out, err := s.runGit(context.Background(), r.gitDir, nil, "ls-tree", "-z", "--name-only", sha)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"); fmt.Sprint(got) != fmt.Sprint([]string{`"q"`, "new\nline"}) {
		t.Fatalf("paths = %q", got)
	}
}
