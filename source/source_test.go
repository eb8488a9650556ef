package source

import (
	"strings"
	"testing"

	"golang.org/x/net/idna"

	"reasonix.io/plugind"
	"reasonix.io/plugind/secrets"
)

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src    string
		kind   Kind
		key    string // Key() for remote sources
		ref    string
		subdir string
		tree   string // TreeRest while a split is pending
		str    string // String(); "" means src itself
	}{
		{src: "git:github.com/acme/tools", kind: GitHub, key: "github.com/acme/tools"},
		{src: "git:github.com/acme/tools.git", kind: GitHub, key: "github.com/acme/tools", str: "git:github.com/acme/tools"},
		{src: "https://github.com/acme/tools", kind: GitHub, key: "github.com/acme/tools"},
		{src: "https://github.com/acme/tools.git", kind: GitHub, key: "github.com/acme/tools", str: "https://github.com/acme/tools"},
		{src: "https://github.com/acme/tools/", kind: GitHub, key: "github.com/acme/tools", str: "https://github.com/acme/tools"},
		{src: "https://www.github.com/acme/tools", kind: GitHub, key: "github.com/acme/tools", str: "https://github.com/acme/tools"},
		{src: "https://github.com/acme/tools/tree/main", kind: GitHub, key: "github.com/acme/tools", ref: "main"},
		{src: "https://github.com/acme/tools/tree/release/v2/plugins/x", kind: GitHub, key: "github.com/acme/tools", tree: "release/v2/plugins/x"},
		{src: "https://github.com/acme/tools/tree/0123456789abcdef0123456789abcdef01234567/p/q", kind: GitHub, key: "github.com/acme/tools", ref: "0123456789abcdef0123456789abcdef01234567", subdir: "p/q"},
		{src: "https://git.example.test/team/tools.git", kind: Git, key: "git.example.test/team/tools"},
		{src: "https://git.example.test/team/tools.git#v1.2", kind: Git, key: "git.example.test/team/tools", ref: "v1.2"},
		{src: "https://GitLab.Example.test/group/sub/tools.git#release/v2", kind: Git, key: "gitlab.example.test/group/sub/tools", ref: "release/v2", str: "https://gitlab.example.test/group/sub/tools.git#release/v2"},
		// Hosts are spelled one way, IDNA's: Unicode labels become punycode.
		{src: "https://Bücher.example/team/tools.git", kind: Git, key: "xn--bcher-kva.example/team/tools", str: "https://xn--bcher-kva.example/team/tools.git"},
		{src: "https://xn--bcher-kva.example/team/tools.git", kind: Git, key: "xn--bcher-kva.example/team/tools"},
		{src: "https://ｇｉｔｈｕｂ.com/acme/tools", kind: GitHub, key: "github.com/acme/tools", str: "https://github.com/acme/tools"},
		{src: "hello@acme-market", kind: MarketEntry, str: "hello@acme-market"},
		{src: "./examples/hello", kind: LocalDir},
		{src: "examples", kind: LocalDir},
		{src: "/abs/path/plugin", kind: LocalDir},
		{src: "./a:b", kind: LocalDir},
		{src: "./name@market", kind: LocalDir},
		{src: "o/r", kind: LocalDir},
		{src: "plugin.ZIP", kind: LocalZip},
		{src: "/tmp/x/hello.zip", kind: LocalZip},
	}
	for _, tt := range tests {
		s, err := Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		want := tt.str
		if want == "" {
			want = tt.src
		}
		if s.Kind != tt.kind || s.String() != want || s.Ref != tt.ref || s.Subdir != tt.subdir || s.TreeRest() != tt.tree && tt.tree != "" {
			t.Errorf("Parse(%q) = %+v (String %q), want kind %v ref %q subdir %q string %q", tt.src, s, s.String(), tt.kind, tt.ref, tt.subdir, want)
		}
		if s.IsRemote() && s.Key() != tt.key {
			t.Errorf("Parse(%q).Key() = %q, want %q", tt.src, s.Key(), tt.key)
		}
		if tt.tree != "" && !s.NeedsSplit() {
			t.Errorf("Parse(%q) should wait for a split", tt.src)
		}
		if s.IsRemote() || s.Kind == MarketEntry {
			again, err := Parse(s.String())
			if err != nil || again.String() != s.String() || again.Key() != s.Key() {
				t.Errorf("String() of %q does not parse back: %q → %+v, %v", tt.src, s.String(), again, err)
			}
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want string // a fragment of the message
	}{
		{"", "empty source"},
		{"   ", "empty source"},
		{"https://user:pw@github.com/acme/tools", "userinfo"},
		{"https://tok@git.example.test/team/tools.git", "userinfo"},
		{"https://github.com:8443/acme/tools", "port"},
		{"https://git.example.test:3000/team/tools.git", "port"},
		{"https://github.com/acme/tools?ref=main", "queries"},
		{"https://git.example.test/team/tools.git?private_token=x", "queries"},
		{"https://github.com/acme/tools#readme", "fragments"},
		{"https://github.com/acme/tools/tree/main/../x", "'..'"},
		{"https://github.com/acme/tools/tree/main/./x", "'.'"},
		{"https://git.example.test/team/../tools.git", "'..'"},
		{"https://github.com/acme/tools/tree/main%2fx", "encoded"},
		{"https://github.com/acme/tools/tree/main%5Cx", "encoded"},
		{"https://git.example.test/team%2ftools.git", "encoded"},
		{`https://github.com/acme/tools/tree/main\x`, "encoded"},
		{"https://github.com/acme//tools", "empty path segment"},
		{"https://github.com/acme/tools/tree/main//x", "empty path segment"},
		{"https://github.com/acme/to ols", "whitespace"},
		{"https://github.com/acme/tools/tree/ma%20in", "whitespace"},
		{"https://github.com/acme/tools\x00", "control"},
		{"https://github.com/acme/tools\x7f", "control"},
		{"https://github.com/acmé/to\u00a0ols", "whitespace"},
		{"https://github.com/acme/tools/tree/ma%C2%85in", "whitespace"},
		{"./plugins/caf\u00e9\u2028x", "whitespace"},
		{"https://github.com/acme/tools/blob/main/README.md", "blob"},
		{"https://github.com/acme/tools/issues/1", "issues"},
		{"https://github.com/acme/tools/pull/1", "pull"},
		{"https://github.com/acme/tools/tree", "not a repository or a tree"},
		{"https://github.com/-acme/tools", "owner"},
		{"https://github.com/ac_me/tools", "owner"},
		{"https://github.com/acme/to$ols", "repository name"},
		{"https://github.com/acme", "expected"},
		{"https://git.example.test/team/tools", "PATH.git"},
		{"https://git.example.test/.git", "PATH.git"},
		{"https://git.example.test/team/-tools.git", "not starting with '-'"},
		{"https://git.example.test/team/tools.git#-upload-pack=x", "'-'"},
		{"https://git.example.test/team/tools.git#a..b", "'..'"},
		{"https://127.0.0.1/team/tools.git", "IP address"},
		{"https://[::1]/team/tools.git", "IP address"},
		{"https://localhost/team/tools.git", "this machine"},
		{"https://xn--zz.example/team/tools.git", "not a valid host name"},
		{"https://a_b.example/team/tools.git", "not a valid host name"},
		{"https://ex!ample.test/team/tools.git", "not a valid host name"},
		{"https://intranet/team/tools.git", "fully qualified"},
		{"http://github.com/acme/tools", "https"},
		{"file:///etc/passwd", "file://"},
		{"ssh://git@github.com/acme/tools#v1", "on github.com"},
		{"git://github.com/acme/tools", "git://"},
		{"ext::sh -c touch% /tmp/pwned", "whitespace"},
		{"ext::sh", "remote-helper"},
		{"git:github.com/acme/tools/extra", "expected git:github.com/OWNER/REPO"},
		{"git:gitlab.com/acme/tools", "git: sources name GitHub"},
		{"https://github.com/acme/tools/tree/-upload-pack=x", "'-'"},
		{"ftp://github.com/acme/tools", "ftp://"},
		{"gh:acme/tools", "did you mean git:github.com/acme/tools?"},
		{"github:acme/tools", "did you mean git:github.com/acme/tools?"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		if err == nil {
			t.Errorf("Parse(%q) accepted", tt.src)
			continue
		}
		if plugind.CodeOf(err) != plugind.CodeInvalidSource {
			t.Errorf("Parse(%q) code = %q", tt.src, plugind.CodeOf(err))
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %q, want it to mention %q", tt.src, err, tt.want)
		}
	}
}

// A refused source is echoed, but never its credentials.
func TestRefusalsMaskCredentials(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"https://alice:s3cr3t-pw@github.com/acme/tools",
		"https://s3cr3t-pw@git.example.test/team/tools.git",
		"https://github.com/acme/tools?access_token=s3cr3t-pw",
		"https://git.example.test/team/tools.git?private_token=s3cr3t-pw&x=1",
		"https://github.com/acme/tools#access_token=s3cr3t-pw",
		"http://alice:s3cr3t-pw@github.com/acme/tools",
		"ssh://alice:s3cr3t-pw@github.com/acme/tools",
		"alice:s3cr3t-pw@github.com:acme/tools.git",
		"https://alice:s3cr3t-pw@github.com:bad port/x",
	} {
		_, err := Parse(src)
		if err == nil {
			t.Errorf("Parse(%q) accepted", src)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("Parse(%q) echoes the secret: %v", src, err)
		}
		if !strings.Contains(err.Error(), secrets.Masked) {
			t.Errorf("Parse(%q) = %v, want the credential shown as %s", src, err, secrets.Masked)
		}
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	s, err := Parse("https://github.com/acme/tools/tree/release/v2/plugins/x")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		refs        []string
		ref, subdir string
	}{
		{[]string{"main", "release/v2", "release"}, "release/v2", "plugins/x"},
		{[]string{"release"}, "release", "v2/plugins/x"},
		{nil, "release", "v2/plugins/x"},
		{[]string{"release/v2/plugins/x"}, "release/v2/plugins/x", ""},
	}
	for _, tt := range tests {
		got := s.Split(tt.refs)
		if got.Ref != tt.ref || got.Subdir != tt.subdir || got.NeedsSplit() {
			t.Errorf("Split(%v) = ref %q subdir %q, want %q %q", tt.refs, got.Ref, got.Subdir, tt.ref, tt.subdir)
		}
	}
	if !s.NeedsSplit() {
		t.Error("Split must not change the value it is called on")
	}
}

func TestRecorded(t *testing.T) {
	t.Parallel()
	sha := "0123456789abcdef0123456789abcdef01234567"
	gh, _ := Parse("git:github.com/acme/tools")
	if got := gh.Recorded(sha, "plugins/x").String(); got != "https://github.com/acme/tools/tree/"+sha+"/plugins/x" || gh.RecordedSubdir("plugins/x") != "" {
		t.Errorf("GitHub recorded = %q", got)
	}
	g, _ := ParseRepoURL("https://gitlab.example.test/team/tools", false)
	if got := g.Recorded(sha, "plugins/x").String(); got != "https://gitlab.example.test/team/tools#"+sha || g.RecordedSubdir("plugins/x") != "plugins/x" {
		t.Errorf("git recorded = %q", got)
	}
	back, err := Parse(g.At(sha).String() + "")
	if err == nil {
		t.Errorf("a .git-less URL is not a CLI source, got %+v", back)
	}
	pinned, err := Parse("https://git.example.test/team/tools.git#" + sha)
	if err != nil || !pinned.Pinned() {
		t.Errorf("pinned generic source: %+v %v", pinned, err)
	}
}

func TestParseRepoURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw       string
		shorthand bool
		key, url  string
		err       string
	}{
		{raw: "https://github.com/acme/tools", key: "github.com/acme/tools", url: "https://github.com/acme/tools.git"},
		{raw: "https://github.com/acme/tools.git", key: "github.com/acme/tools", url: "https://github.com/acme/tools.git"},
		{raw: "git@github.com:acme/tools.git", key: "github.com/acme/tools", url: "https://github.com/acme/tools.git"},
		{raw: "acme/tools", shorthand: true, key: "github.com/acme/tools", url: "https://github.com/acme/tools.git"},
		{raw: "acme/tools", err: "not a repository URL"},
		{raw: "https://gitlab.example.test/team/tools", key: "gitlab.example.test/team/tools", url: "https://gitlab.example.test/team/tools"},
		{raw: "https://gitlab.example.test/team/tools.git", key: "gitlab.example.test/team/tools", url: "https://gitlab.example.test/team/tools.git"},
		{raw: "git@gitlab.example.test:team/tools.git", key: "ssh://git@gitlab.example.test/team/tools", url: "ssh://git@gitlab.example.test/team/tools.git"},
		{raw: "ssh://git@gitlab.example.test:2222/team/tools", key: "ssh://git@gitlab.example.test:2222/team/tools", url: "ssh://git@gitlab.example.test:2222/team/tools"},
		{raw: "ssh://git@github.com/acme/tools.git", key: "github.com/acme/tools", url: "https://github.com/acme/tools.git"},
		{raw: "git@gitlab.example.test:team/tools.git#v1", err: "fragments"},
		{raw: "ssh://git@gitlab.example.test/team/tools.git#v1", err: "fragments"},
		{raw: "https://github.com/acme/tools/tree/main/x", err: "tree URL"},
		{raw: "https://gitlab.example.test/team/tools.git#v1", err: "fragments"},
		{raw: "https://u:p@gitlab.example.test/team/tools", err: "userinfo"},
		{raw: "https://127.0.0.1/team/tools", err: "IP address"},
		{raw: "file:///srv/git/tools", err: "file://"},
	}
	for _, tt := range tests {
		s, err := ParseRepoURL(tt.raw, tt.shorthand)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseRepoURL(%q) = %+v, %v; want an error saying %q", tt.raw, s, err, tt.err)
			}
			continue
		}
		if err != nil || s.Key() != tt.key || s.URL() != tt.url {
			t.Errorf("ParseRepoURL(%q) = key %q url %q, %v; want %q %q", tt.raw, s.Key(), s.URL(), err, tt.key, tt.url)
		}
	}
}

func TestCheckRef(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"main", "release/v2", "v1.0.0", "feature/x-y_z", "0123456789abcdef0123456789abcdef01234567"} {
		if err := CheckRef(ok); err != nil {
			t.Errorf("CheckRef(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", "a..b", "a//b", "a/", "a.", "a.lock", "@", "a@{1}", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`, ".hidden", "x/.y", "a\x7f", "a\x00b", "a\xffb", "\xc3"} {
		if err := CheckRef(bad); err == nil {
			t.Errorf("CheckRef(%q) accepted", bad)
		}
	}
}

// TestGitHubHostIsNormal: NormalizeHost answers GitHub's host at once, as
// IDNA and checkHost leave it.
func TestGitHubHostIsNormal(t *testing.T) {
	t.Parallel()
	if ascii, err := idna.Lookup.ToASCII(GitHubHost); err != nil || ascii != GitHubHost || checkHost(ascii) != nil {
		t.Fatalf("%q: IDNA gives %q, %v; checkHost: %v", GitHubHost, ascii, err, checkHost(ascii))
	}
}
