package checksumlog

import (
	"strings"
	"testing"

	"golang.org/x/mod/module"
)

func TestLogPathRoundTrip(t *testing.T) {
	cases := []struct {
		place, path string
		readable    string // "" when it must be escaped
	}{
		{"github.com/owner/repo", "", "github.com/owner/repo"},
		{"github.com/owner/repo", "plugins/fmt", "github.com/owner/repo/-/plugins/fmt"},
		{"github.com/Owner/Repo", "Plugins/X", "github.com/Owner/Repo/-/Plugins/X"},
		{"github.com/owner/.github", "", ""},
		{"github.com/owner/repo", "plugins/.hidden", ""},
		{"github.com/owner/repo", "with space", ""},
		{"github.com/owner/repo", "v1", ""}, // Go refuses a /v1 suffix
		{"github.com/owner/repo", "-/x", "github.com/owner/repo/-/-/x"},
		{"github.com/owner/v1", "", ""},
		{"127.0.0.1:9000/team/tools", "", ""},
		{"git.corp.test/a/-/b", "x", ""},
		{"escaped.invalid/x", "", ""},
		{"git.corp.test/group/sub/repo", "a/b", "git.corp.test/group/sub/repo/-/a/b"},
		{"github.com/o/r", "naïve", ""},
	}
	for _, c := range cases {
		lp := LogPath(c.place, c.path)
		if c.readable != "" && lp != c.readable {
			t.Errorf("LogPath(%q, %q) = %q, want %q", c.place, c.path, lp, c.readable)
		}
		if c.readable == "" && !strings.HasPrefix(lp, escapedHost+"/") {
			t.Errorf("LogPath(%q, %q) = %q, want it escaped", c.place, c.path, lp)
		}
		if _, err := module.EscapePath(lp); err != nil {
			t.Errorf("LogPath(%q, %q) = %q, which the sumdb client refuses: %v", c.place, c.path, lp, err)
		}
		place, path, err := SplitLogPath(lp)
		if err != nil || place != c.place || path != c.path {
			t.Errorf("SplitLogPath(%q) = %q, %q, %v; want %q, %q", lp, place, path, err, c.place, c.path)
		}
	}
	for _, bad := range []string{"escaped.invalid/!!", "escaped.invalid/" + b32.EncodeToString([]byte("nonewline")), "not a path"} {
		if p, q, err := SplitLogPath(bad); err == nil {
			t.Errorf("SplitLogPath(%q) = %q, %q; want an error", bad, p, q)
		}
	}
}

func TestRecordLine(t *testing.T) {
	r := Record{Place: "github.com/o/r", Path: "plugins/fmt", Commit: strings.Repeat("a", 40), Digest: "sha256:" + strings.Repeat("b", 64), GitTree: strings.Repeat("c", 40)}
	line := r.Line()
	want := "github.com/o/r/-/plugins/fmt " + r.Commit + " " + r.Digest + " " + r.GitTree + "\n"
	if line != want {
		t.Fatalf("Line() = %q, want %q", line, want)
	}
	got, err := ParseText([]byte(line), LogPath(r.Place, r.Path), r.Commit)
	if err != nil || got != r {
		t.Fatalf("ParseText = %+v, %v; want %+v", got, err, r)
	}
	if r.Key() != "github.com/o/r/plugins/fmt@"+r.Commit {
		t.Errorf("Key() = %q", r.Key())
	}
	noTree := r
	noTree.GitTree = ""
	if got, err := ParseText([]byte(noTree.Line()), LogPath(r.Place, r.Path), r.Commit); err != nil || got != noTree {
		t.Errorf("a record without a git tree: %+v, %v", got, err)
	}
	for name, text := range map[string]string{
		"two lines":    line + line,
		"no newline":   strings.TrimSuffix(line, "\n"),
		"other commit": strings.Replace(line, r.Commit, strings.Repeat("d", 40), 1),
		"other path":   strings.Replace(line, "plugins/fmt", "plugins/lint", 1),
		"bad digest":   strings.Replace(line, "sha256:", "sha512:", 1),
		"short tree":   strings.Replace(line, r.GitTree, "c", 1),
	} {
		if _, err := ParseText([]byte(text), LogPath(r.Place, r.Path), r.Commit); err == nil {
			t.Errorf("%s: ParseText accepted %q", name, text)
		}
	}
}
