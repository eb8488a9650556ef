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
		{"nested path on GitHub", func() { s.CreateRepoAt("group/sub/tools") }},
		{"raw NUL name", func() { r.CommitRawTree("main", []RawEntry{{Name: "a\x00b", Mode: "100644"}}) }},
		{"raw bad mode", func() { r.CommitRawTree("main", []RawEntry{{Name: "a", Mode: "100600"}}) }},
		{"raw dir with content", func() { r.CommitRawTree("main", []RawEntry{{Name: "a", Mode: "040000", Content: "x"}}) }},
		{"raw file with entries", func() {
			r.CommitRawTree("main", []RawEntry{{Name: "a", Mode: "100644", Entries: []RawEntry{{Name: "b", Mode: "100644"}}}})
		}},
		{"raw bad gitlink", func() { r.CommitRawTree("main", []RawEntry{{Name: "a", Mode: "160000", Content: "HEAD"}}) }},
		{"raw nested error", func() {
			r.CommitRawTree("main", []RawEntry{{Name: "d", Mode: "040000", Entries: []RawEntry{{Name: "x", Mode: "7"}}}})
		}},
		{"raw bad branch", func() { r.CommitRawTree("a..b", nil) }},
		{"unreachable parent by name", func() { r.CommitUnreachable("main", nil) }},
		{"unreachable unknown parent", func() { r.CommitUnreachable(strings.Repeat("0", 40), nil) }},
		{"unreachable bad path", func() { r.CommitUnreachable("", map[string]string{"/abs": "x"}) }},
		{"archive for a name", func() { r.SetArchive("main", nil) }},
		{"large negative", func() { r.CommitLargeFile("main", "x", -1) }},
		{"large bad path", func() { r.CommitLargeFile("main", "x/", 1) }},
		{"many negative", func() { r.CommitManyFiles("main", "d", -1, 1) }},
		{"many bad dir", func() { r.CommitManyFiles("main", "/d", 1, 1) }},
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

func TestRepoPaths(t *testing.T) {
	t.Parallel()
	gh := &Server{}
	plain := &Server{plain: true}
	deep := strings.Repeat("a/", maxPathSegments) + "a"
	tests := []struct {
		path          string
		github, plain bool
	}{
		{"acme/tools", true, true},
		{"acme/tools.js", true, true},
		{"tools", false, true},
		{"group/sub/tools", false, true},
		{"ac_me/tools", false, true}, // GitHub owners have no '_'
		{"acme/tools.git", false, false},
		{"group/x.GIT/tools", false, false},
		{"group/../tools", false, false},
		{"group/./tools", false, false},
		{"group//tools", false, false},
		{"/tools", false, false},
		{"tools/", false, false},
		{"", false, false},
		{"a b/c", false, false},
		{deep, false, false},
	}
	for _, tt := range tests {
		if err := gh.checkRepoPath(tt.path); (err == nil) != tt.github {
			t.Errorf("GitHub %q: %v", tt.path, err)
		}
		if err := plain.checkRepoPath(tt.path); (err == nil) != tt.plain {
			t.Errorf("plain %q: %v", tt.path, err)
		}
	}
}

func TestClassifyPlainGit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, repo, tail string
		c                counter
	}{
		{"/team/tools.git/info/refs", "team/tools", "info/refs", cInfoRefs},
		{"/team/tools/info/refs", "team/tools", "info/refs", cInfoRefs},
		{"/g/s/tools.git/git-upload-pack", "g/s/tools", "git-upload-pack", cUploadPack},
		{"/tools/git-receive-pack", "tools", "git-receive-pack", cOther},
		{"/g/info/info/refs", "g/info", "info/refs", cInfoRefs},
		{"/info/refs", "", "", cOther},
		{"/.git/info/refs", "", "", cOther},
		{"/a/../b/info/refs", "", "", cOther},
		{"/a%2Fb/info/refs", "", "", cOther},
		{"/api/v3/repos/team/tools", "", "", cOther},
		{"/team/tools.git/HEAD", "", "", cOther},
	}
	for _, tt := range tests {
		q := classifyPlainGit(tt.path)
		if q.repo != tt.repo || q.tail != tt.tail || q.counter != tt.c || (q.repo != "") != (q.kind == RouteGit) {
			t.Errorf("%s: %+v", tt.path, q)
		}
	}
}

func TestRawTreeOrder(t *testing.T) {
	t.Parallel()
	var blobs []string
	nodes, err := parseRawEntries([]RawEntry{
		{Name: "a-b", Mode: "100644", Content: "1"},
		{Name: "a", Mode: "040000"},
		{Name: "a", Mode: "120000", Content: "2"},
		{Name: "a.c", Mode: "100644", Content: "3"},
		{Name: "B", Mode: "100644", Content: "4"},
		{Name: "a", Mode: "100755", Content: "5"},
	}, "", &blobs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nodes {
		got = append(got, n.mode+" "+n.name)
	}
	// git's order: "a" (blobs, in the order given) < "a-b" < "a.c" < "a/".
	want := []string{"100644 B", "120000 a", "100755 a", "100644 a-b", "100644 a.c", "40000 a"}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(blobs) != 5 {
		t.Fatalf("order = %q (%d blobs), want %q", got, len(blobs), want)
	}
}

func TestPlainHelperFailuresAreReported(t *testing.T) {
	t.Parallel()
	tb := &recordingTB{}
	s, err := start(t.TempDir(), tb, []Option{WithPlainGit()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.CreateRepoAt("group/sub/tools")
	sha := r.Commit("main", map[string]string{"a": "1"})
	steps := map[string]func(){
		"SetArchive":        func() { r.SetArchive(sha, []byte("x")) },
		"TamperArchive":     func() { r.TamperArchive(sha, Tamper{}) },
		"dot-dot path":      func() { s.CreateRepoAt("group/../tools") },
		"duplicate by case": func() { s.CreateRepoAt("GROUP/sub/Tools") },
		"owner with slash":  func() { s.CreateRepo("group/sub", "x") },
	}
	for name, do := range steps {
		before := len(tb.msgs)
		do()
		if len(tb.msgs) != before+1 {
			t.Errorf("%s: no failure reported", name)
		}
	}
}

// The ref listing refs keeps must follow every move, however it was made:
// the helpers', and git run on the repository behind the server's back
// (a loose ref rewritten, refs packed, a branch deleted).
func TestRefsFollowEveryMove(t *testing.T) {
	t.Parallel()
	s := New(t)
	r := s.CreateRepo("acme", "moves")
	a := r.Commit("main", map[string]string{"a": "1"})
	b := r.Commit("main", map[string]string{"a": "2"})
	ctx := context.Background()
	head := func(want string) {
		t.Helper()
		got, err := r.resolve(ctx, "HEAD")
		if err != nil || got != want {
			t.Fatalf("HEAD = %s, %v; want %s", got, err, want)
		}
	}
	git := func(args ...string) {
		t.Helper()
		if _, err := s.runGit(ctx, r.gitDir, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	head(b)
	head(b) // from the kept listing
	r.ResetBranch("main", a)
	head(a)
	git("update-ref", "refs/heads/main", b)
	head(b)
	git("pack-refs", "--all")
	head(b)
	git("update-ref", "refs/heads/main", a)
	head(a)
	git("pack-refs", "--all")
	git("update-ref", "refs/heads/side", b)
	if got, err := r.resolve(ctx, "side"); err != nil || got != b {
		t.Fatalf("side = %s, %v; want %s", got, err, b)
	}
	git("update-ref", "-d", "refs/heads/side")
	if _, err := r.resolve(ctx, "side"); err != errNoRef {
		t.Fatalf("deleted side: %v; want errNoRef", err)
	}
}

// TamperArchive fails the test for a path the archive does not hold as a
// file, and serves nothing altered then.
func TestTamperArchiveMissingPath(t *testing.T) {
	t.Parallel()
	tb := &recordingTB{}
	s, err := start(t.TempDir(), tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.CreateRepo("acme", "tools")
	sha := r.Commit("main", map[string]string{"a": "1"})
	for _, tm := range []Tamper{{Change: map[string]string{"nope": "x"}}, {Chmod: []string{"a/"}}} {
		before := len(tb.msgs)
		r.TamperArchive(sha, tm)
		if len(tb.msgs) != before+1 || !strings.Contains(tb.msgs[before], "no such files") {
			t.Errorf("%+v: reported %q", tm, tb.msgs[before:])
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.craftedArchive[archiveKey(r, sha)]; ok {
		t.Error("a failed TamperArchive set an archive")
	}
}
