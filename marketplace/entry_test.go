package marketplace

import (
	"fmt"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

const (
	sha1 = "0123456789abcdef0123456789abcdef01234567"
	sha2 = "89abcdef0123456789abcdef0123456789abcdef"
)

// want is the expected classification of one entry. Empty strings are
// checked too (a ready entry must have no Reason, a relative one no Owner).
type want struct {
	kind     Kind
	status   Status
	path     string
	owner    string
	repo     string
	sha      string
	ref      string
	unpinned bool
	code     plugind.Code // for non-ready entries
	reason   string       // substring of Reason for non-ready entries
}

// oneEntry parses a Claude document with metadata (may be "") and a single
// entry.
func oneEntry(t *testing.T, metadata, entry string, opts Options, parse func([]byte, Options) (*Marketplace, error)) (*Marketplace, Entry) {
	t.Helper()
	doc := `{"name":"m","owner":{"name":"o"},`
	if metadata != "" {
		doc += `"metadata":` + metadata + `,`
	}
	doc += `"plugins":[` + entry + `]}`
	m, err := parse([]byte(doc), opts)
	if err != nil {
		t.Fatalf("parse %s: %v", doc, err)
	}
	if len(m.Entries) != 1 {
		t.Fatalf("got %d entries, want 1", len(m.Entries))
	}
	return m, m.Entries[0]
}

func check(t *testing.T, e Entry, w want) {
	t.Helper()
	if e.Kind != w.kind || e.Status != w.status {
		t.Fatalf("kind/status = %s/%s, want %s/%s (reason %q)", e.Kind, e.Status, w.kind, w.status, e.Reason)
	}
	if e.Path != w.path || e.Remote.Owner() != w.owner || e.Remote.Name() != w.repo || e.SHA != w.sha || e.Ref != w.ref || e.Unpinned != w.unpinned {
		t.Errorf("got path=%q owner=%q repo=%q sha=%q ref=%q unpinned=%v, want path=%q owner=%q repo=%q sha=%q ref=%q unpinned=%v",
			e.Path, e.Remote.Owner(), e.Remote.Name(), e.SHA, e.Ref, e.Unpinned, w.path, w.owner, w.repo, w.sha, w.ref, w.unpinned)
	}
	if w.status == StatusReady {
		if e.Reason != "" || e.Code != "" || e.Err() != nil {
			t.Errorf("ready entry has reason %q code %q", e.Reason, e.Code)
		}
		return
	}
	if !strings.Contains(e.Reason, w.reason) {
		t.Errorf("reason %q does not contain %q", e.Reason, w.reason)
	}
	if !strings.HasPrefix(e.Reason, "marketplace entry ") {
		t.Errorf("reason %q does not name the entry", e.Reason)
	}
	if e.Code != w.code || plugind.CodeOf(e.Err()) != w.code {
		t.Errorf("code = %q (Err %q), want %q", e.Code, plugind.CodeOf(e.Err()), w.code)
	}
}

func TestRelativeSources(t *testing.T) {
	t.Parallel()
	inv := plugind.CodeInvalidSource
	tests := []struct {
		name, metadata, source string
		w                      want
	}{
		{"dot-slash", "", `"./plugins/a"`, want{kind: KindRelative, status: StatusReady, path: "plugins/a"}},
		{"dot-slash trailing slash", "", `"./plugins/a/"`, want{kind: KindRelative, status: StatusReady, path: "plugins/a"}},
		{"bare without root", "", `"plugins/a"`, want{kind: KindRelative, status: StatusReady, path: "plugins/a"}},
		{"root dot", "", `"."`, want{kind: KindRelative, status: StatusReady, path: "."}},
		{"root dot-slash", "", `"./"`, want{kind: KindRelative, status: StatusReady, path: "."}},
		{"bare under pluginRoot", `{"pluginRoot":"./plugins"}`, `"a"`, want{kind: KindRelative, status: StatusReady, path: "plugins/a"}},
		{"bare under pluginRoot without dot", `{"pluginRoot":"plugins/"}`, `"a/b"`, want{kind: KindRelative, status: StatusReady, path: "plugins/a/b"}},
		{"dot-slash ignores pluginRoot", `{"pluginRoot":"./plugins"}`, `"./plugins/a"`, want{kind: KindRelative, status: StatusReady, path: "plugins/a"}},
		{"dot ignores pluginRoot", `{"pluginRoot":"./plugins"}`, `"."`, want{kind: KindRelative, status: StatusReady, path: "."}},
		{"pluginRoot dot", `{"pluginRoot":"."}`, `"a"`, want{kind: KindRelative, status: StatusReady, path: "a"}},
		{"bad pluginRoot", `{"pluginRoot":"../elsewhere"}`, `"a"`, want{kind: KindRelative, status: StatusError, code: inv, reason: "metadata.pluginRoot"}},
		{"bad pluginRoot spares dot-slash", `{"pluginRoot":"/abs"}`, `"./a"`, want{kind: KindRelative, status: StatusReady, path: "a"}},
		{"dotdot", "", `"../x"`, want{kind: KindRelative, status: StatusError, code: inv, reason: `contains a ".." segment`}},
		{"dotdot inside", "", `"./a/../b"`, want{kind: KindRelative, status: StatusError, code: inv, reason: `".."`}},
		{"dotdot bare", "", `"a/.."`, want{kind: KindRelative, status: StatusError, code: inv, reason: `".."`}},
		{"absolute", "", `"/etc/plugins"`, want{kind: KindRelative, status: StatusError, code: inv, reason: "is absolute"}},
		{"drive letter", "", `"C:/plugins/a"`, want{kind: KindRelative, status: StatusError, code: inv, reason: "is absolute"}},
		{"bare drive letter", "", `"C:"`, want{kind: KindRelative, status: StatusError, code: inv, reason: "is absolute"}},
		{"backslash", "", `"plugins\\a"`, want{kind: KindRelative, status: StatusError, code: inv, reason: "backslash"}},
		{"backslash dotdot", "", `"..\\a"`, want{kind: KindRelative, status: StatusError, code: inv, reason: `".."`}},
		{"whitespace", "", `"./my plugin"`, want{kind: KindRelative, status: StatusError, code: inv, reason: "whitespace"}},
		{"control", "", `"./a\u0000b"`, want{kind: KindRelative, status: StatusError, code: inv, reason: "control character"}},
		{"empty", "", `""`, want{kind: KindUnknown, status: StatusError, code: inv, reason: "empty string"}},
		// Claude Code refuses a string source that is not a "./" path.
		{"https string", "", `"https://github.com/o/r"`, want{kind: KindExternal, status: StatusError, code: inv, reason: "is not a plugin source"}},
		{"github shorthand string", "", `"github:o/r"`, want{kind: KindExternal, status: StatusError, code: inv, reason: `"github:o/r"`}},
		{"scp string", "", `"git@github.com:o/r.git"`, want{kind: KindExternal, status: StatusError, code: inv, reason: "is not a plugin source"}},
		{"npm string", "", `"npm:@acme/plugin"`, want{kind: KindExternal, status: StatusError, code: inv, reason: "is not a plugin source"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, e := oneEntry(t, tt.metadata, `{"name":"p","source":`+tt.source+`}`, Options{}, Parse)
			check(t, e, tt.w)
		})
	}
}

func TestObjectSources(t *testing.T) {
	t.Parallel()
	inv, np := plugind.CodeInvalidSource, plugind.CodeNotPinnable
	tests := []struct {
		name   string
		source string
		opts   Options
		w      want
	}{
		// url
		{"url pinned", `{"source":"url","url":"https://github.com/acme/tools","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusReady, owner: "acme", repo: "tools", sha: sha1}},
		{"url .git with path and ref", `{"source":"url","url":"https://github.com/acme/tools.git","sha":"` + sha1 + `","ref":"main","path":"./plugins/x/"}`, Options{},
			want{kind: KindURL, status: StatusReady, owner: "acme", repo: "tools", sha: sha1, ref: "main", path: "plugins/x"}},
		{"url path dot is repo root", `{"source":"url","url":"https://github.com/acme/tools","sha":"` + sha1 + `","path":"."}`, Options{},
			want{kind: KindURL, status: StatusReady, owner: "acme", repo: "tools", sha: sha1}},
		{"url scp form", `{"source":"url","url":"git@github.com:acme/tools.git","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusReady, owner: "acme", repo: "tools", sha: sha1}},
		{"url unpinned", `{"source":"url","url":"https://github.com/acme/tools"}`, Options{},
			want{kind: KindURL, status: StatusSkipped, owner: "acme", repo: "tools", code: np, reason: `has no "sha" pin`}},
		{"url unpinned allowed", `{"source":"url","url":"https://github.com/acme/tools","ref":"v1"}`, Options{AllowUnpinned: true},
			want{kind: KindURL, status: StatusReady, owner: "acme", repo: "tools", ref: "v1", unpinned: true}},
		{"url pinned not unpinned when allowed", `{"source":"url","url":"https://github.com/acme/tools","sha":"` + sha1 + `"}`, Options{AllowUnpinned: true},
			want{kind: KindURL, status: StatusReady, owner: "acme", repo: "tools", sha: sha1}},
		{"url tree", `{"source":"url","url":"https://github.com/acme/tools/tree/main/x","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusError, code: inv, reason: "tree URL"}},
		{"url blob", `{"source":"url","url":"https://github.com/acme/tools/blob/main/x","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusError, code: inv, reason: "not a repository or a tree URL"}},
		{"url http github", `{"source":"url","url":"http://github.com/acme/tools","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusError, code: inv, reason: "only https://"}},
		{"url userinfo", `{"source":"url","url":"https://tok@github.com/acme/tools","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusError, code: inv, reason: "userinfo"}},
		{"url non-github", `{"source":"url","url":"https://gitlab.com/acme/tools.git","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusReady, owner: "acme", repo: "tools", sha: sha1}},
		{"url non-github unpinned allowed", `{"source":"url","url":"https://gitlab.com/acme/tools.git"}`, Options{AllowUnpinned: true},
			want{kind: KindURL, status: StatusReady, owner: "acme", repo: "tools", unpinned: true}},
		{"url non-github unpinned", `{"source":"url","url":"https://gitlab.com/acme/tools"}`, Options{},
			want{kind: KindURL, status: StatusSkipped, owner: "acme", repo: "tools", code: np, reason: `source for gitlab.com/acme/tools has no "sha" pin`}},
		{"url ip host", `{"source":"url","url":"https://10.0.0.1/acme/tools.git","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusError, code: inv, reason: "IP address"}},
		{"url file", `{"source":"url","url":"file:///srv/git/tools.git","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusError, code: inv, reason: "file://"}},
		{"url relative", `{"source":"url","url":"./"}`, Options{},
			want{kind: KindURL, status: StatusSkipped, code: np, reason: `"./" is not a repository URL`}},
		{"url short sha", `{"source":"url","url":"https://github.com/acme/tools","sha":"0123456"}`, Options{},
			want{kind: KindURL, status: StatusError, owner: "acme", repo: "tools", code: inv, reason: `source.sha "0123456" is not a full 40-character`}},
		{"url uppercase sha", `{"source":"url","url":"https://github.com/acme/tools","sha":"` + strings.ToUpper(sha1) + `"}`, Options{},
			want{kind: KindURL, status: StatusError, owner: "acme", repo: "tools", code: inv, reason: "source.sha"}},
		{"url escaping path", `{"source":"url","url":"https://github.com/acme/tools","sha":"` + sha1 + `","path":"../x"}`, Options{},
			want{kind: KindURL, status: StatusError, owner: "acme", repo: "tools", sha: sha1, code: inv, reason: "source.path"}},
		{"url missing url", `{"source":"url","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindURL, status: StatusError, code: inv, reason: `has no "url"`}},
		{"url mistyped url", `{"source":"url","url":42}`, Options{},
			want{kind: KindURL, status: StatusError, code: inv, reason: "source.url must be a string, found a number"}},
		{"url dash ref", `{"source":"url","url":"https://github.com/acme/tools","ref":"--upload-pack=x"}`, Options{AllowUnpinned: true},
			want{kind: KindURL, status: StatusError, owner: "acme", repo: "tools", code: inv, reason: "starts with '-'"}},

		// github
		{"github pinned", `{"source":"github","repo":"acme/gh","sha":"` + sha1 + `","path":"sub"}`, Options{},
			want{kind: KindGitHub, status: StatusReady, owner: "acme", repo: "gh", sha: sha1, path: "sub"}},
		{"github unpinned", `{"source":"github","repo":"acme/gh"}`, Options{},
			want{kind: KindGitHub, status: StatusSkipped, owner: "acme", repo: "gh", code: np, reason: `"github" source for github.com/acme/gh has no "sha" pin`}},
		{"github unpinned allowed", `{"source":"github","repo":"acme/gh"}`, Options{AllowUnpinned: true},
			want{kind: KindGitHub, status: StatusReady, owner: "acme", repo: "gh", unpinned: true}},
		{"github commit key", `{"source":"github","repo":"acme/gh","commit":"` + sha1 + `"}`, Options{},
			want{kind: KindGitHub, status: StatusSkipped, owner: "acme", repo: "gh", code: np, reason: `non-standard "commit" key`}},
		{"github commit key allowed", `{"source":"github","repo":"acme/gh","commit":"` + sha1 + `"}`, Options{AllowUnpinned: true},
			want{kind: KindGitHub, status: StatusReady, owner: "acme", repo: "gh", unpinned: true}},
		{"github commit and sha", `{"source":"github","repo":"acme/gh","commit":"` + sha2 + `","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindGitHub, status: StatusReady, owner: "acme", repo: "gh", sha: sha1}},
		{"github url as repo", `{"source":"github","repo":"https://github.com/acme/gh","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindGitHub, status: StatusError, code: inv, reason: "must be OWNER/REPO"}},
		{"github bad owner", `{"source":"github","repo":"-acme/gh","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindGitHub, status: StatusError, code: inv, reason: "not a valid GitHub OWNER/REPO"}},
		{"github missing repo", `{"source":"github"}`, Options{},
			want{kind: KindGitHub, status: StatusError, code: inv, reason: `has no "repo"`}},

		// git-subdir
		{"git-subdir sha and ref", `{"source":"git-subdir","url":"https://github.com/acme/mono.git","path":"plugins/x","ref":"main","sha":"` + sha1 + `"}`, Options{},
			want{kind: KindGitSubdir, status: StatusReady, owner: "acme", repo: "mono", path: "plugins/x", sha: sha1, ref: "main"}},
		{"git-subdir ref only", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"./plugins/x","ref":"release/v2"}`, Options{},
			want{kind: KindGitSubdir, status: StatusReady, owner: "acme", repo: "mono", path: "plugins/x", ref: "release/v2"}},
		{"git-subdir default branch", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusReady, owner: "acme", repo: "mono", path: "x"}},
		{"git-subdir shorthand", `{"source":"git-subdir","url":"acme/mono","path":"x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusReady, owner: "acme", repo: "mono", path: "x"}},
		{"git-subdir scp", `{"source":"git-subdir","url":"git@github.com:acme/mono.git","path":"x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusReady, owner: "acme", repo: "mono", path: "x"}},
		{"git-subdir missing path", `{"source":"git-subdir","url":"https://github.com/acme/mono"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: `has no "path"`}},
		{"git-subdir empty path", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":""}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: "source.path is empty"}},
		{"git-subdir dotdot path", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"plugins/../../x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: `source.path "plugins/../../x" contains a ".." segment`}},
		{"git-subdir dotdot cancelling", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"a/../b"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: `".."`}},
		{"git-subdir absolute path", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"/plugins/x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: "is absolute"}},
		{"git-subdir drive path", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"C:plugins"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: "is absolute"}},
		{"git-subdir backslash path", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"plugins\\x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: "backslash"}},
		{"git-subdir whitespace path", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"plugins/my x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: "whitespace"}},
		{"git-subdir tab path", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"plugins/\tx"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", code: inv, reason: "whitespace"}},
		{"git-subdir tree url", `{"source":"git-subdir","url":"https://github.com/acme/mono/tree/main/plugins","path":"x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, code: inv, reason: "tree URL"}},
		{"git-subdir non-github url", `{"source":"git-subdir","url":"https://gitlab.com/acme/mono.git","path":"x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusReady, owner: "acme", repo: "mono", path: "x"}},
		{"git-subdir non-github scp", `{"source":"git-subdir","url":"git@gitlab.com:acme/mono.git","path":"x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusReady, owner: "acme", repo: "mono", path: "x"}},
		{"git-subdir missing url", `{"source":"git-subdir","path":"x"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, code: inv, reason: `has no "url"`}},
		{"git-subdir short sha", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","sha":"abc1234"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: `source.sha "abc1234"`}},
		{"git-subdir 41 hex sha", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","sha":"` + sha1 + `0"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: "source.sha"}},
		{"git-subdir mistyped sha", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","sha":123}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: "source.sha must be a string"}},
		{"git-subdir dash ref", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","ref":"-oops"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: `source.ref "-oops" starts with '-'`}},
		{"git-subdir whitespace ref", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","ref":"main branch"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: "whitespace"}},
		{"git-subdir control ref", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","ref":"main\u0007"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: "control character"}},
		{"git-subdir dotdot ref", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","ref":"main..evil"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: `contains ".."`}},
		{"git-subdir empty ref", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","ref":""}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: "is empty"}},
		{"git-subdir revision ref", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","ref":"main@{1}"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: "revision expression"}},
		{"git-subdir caret ref", `{"source":"git-subdir","url":"https://github.com/acme/mono","path":"x","ref":"main^"}`, Options{},
			want{kind: KindGitSubdir, status: StatusError, owner: "acme", repo: "mono", path: "x", code: inv, reason: "'^'"}},

		// unsupported kinds
		{"npm", `{"source":"npm","package":"@acme/p"}`, Options{AllowUnpinned: true},
			want{kind: KindNPM, status: StatusSkipped, code: np, reason: "npm sources are not supported"}},
		// Types Claude Code does not know are refused, as it refuses them.
		{"pip", `{"source":"pip","package":"acme"}`, Options{},
			want{kind: KindPip, status: StatusError, code: inv, reason: `unknown source type "pip"`}},
		{"unknown type", `{"source":"hg","url":"https://example.com/r"}`, Options{},
			want{kind: KindUnknown, status: StatusError, code: inv, reason: `unknown source type "hg"`}},
		{"local in claude", `{"source":"local","path":"./x"}`, Options{},
			want{kind: KindUnknown, status: StatusError, code: inv, reason: `"local" is Codex's`}},
		{"no type", `{"url":"https://github.com/acme/tools"}`, Options{},
			want{kind: KindUnknown, status: StatusError, code: inv, reason: `no "source" type field`}},
		{"mistyped type", `{"source":1}`, Options{},
			want{kind: KindUnknown, status: StatusError, code: inv, reason: "source.source must be a string"}},
		{"array source", `["./x"]`, Options{},
			want{kind: KindUnknown, status: StatusError, code: inv, reason: `"source" must be a path string or an object, found an array`}},
		{"null source", `null`, Options{},
			want{kind: KindUnknown, status: StatusError, code: inv, reason: "found null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, e := oneEntry(t, "", `{"name":"p","source":`+tt.source+`}`, tt.opts, Parse)
			check(t, e, tt.w)
		})
	}
}

func TestEntryFields(t *testing.T) {
	t.Parallel()
	inv := plugind.CodeInvalidSource
	tests := []struct {
		name  string
		entry string
		w     want
		check func(t *testing.T, e Entry)
	}{
		{"metadata kept", `{"name":"My.Plugin_1","source":"./x","version":"1.0.0","description":"Does things","strict":true}`,
			want{kind: KindRelative, status: StatusReady, path: "x"},
			func(t *testing.T, e Entry) {
				if e.Name != "My.Plugin_1" || e.Version != "1.0.0" || e.Description != "Does things" || e.Strict == nil || !*e.Strict {
					t.Errorf("got %+v", e)
				}
			}},
		{"strict absent", `{"name":"p","source":"./x"}`, want{kind: KindRelative, status: StatusReady, path: "x"},
			func(t *testing.T, e Entry) {
				if e.Strict != nil {
					t.Errorf("Strict = %v, want nil", *e.Strict)
				}
			}},
		{"strict false", `{"name":"p","source":"./x","strict":false}`,
			want{kind: KindRelative, status: StatusReady, path: "x"},
			func(t *testing.T, e Entry) {
				if e.Strict == nil || *e.Strict {
					t.Errorf("Strict not recorded as false")
				}
			}},
		{"strict false unpinned", `{"name":"p","source":{"source":"url","url":"https://github.com/a/b"},"strict":false}`,
			want{kind: KindURL, status: StatusSkipped, owner: "a", repo: "b", code: plugind.CodeNotPinnable, reason: `has no "sha" pin`}, nil},
		{"error beats strict false", `{"name":"p","source":"../x","strict":false}`,
			want{kind: KindRelative, status: StatusError, code: inv, reason: `".."`}, nil},
		{"strict string", `{"name":"p","source":"./x","strict":"false"}`,
			want{kind: KindRelative, status: StatusError, path: "x", code: inv, reason: `"strict" must be true or false, found a string`}, nil},
		{"name kept exactly", `{"name":"Foo-Bar","source":"./x"}`, want{kind: KindRelative, status: StatusReady, path: "x"},
			func(t *testing.T, e Entry) {
				if e.Name != "Foo-Bar" {
					t.Errorf("name %q", e.Name)
				}
			}},
		{"name with slash", `{"name":"a/b","source":"./x"}`,
			want{kind: KindRelative, status: StatusError, path: "x", code: inv, reason: `plugin name "a/b" is not allowed`}, nil},
		{"name with space", `{"name":" p","source":"./x"}`,
			want{kind: KindRelative, status: StatusError, path: "x", code: inv, reason: "is not allowed"}, nil},
		{"name too long", `{"name":"` + strings.Repeat("a", 65) + `","source":"./x"}`,
			want{kind: KindRelative, status: StatusError, path: "x", code: inv, reason: "the limit is 64"}, nil},
		{"name dotdot", `{"name":"a..b","source":"./x"}`,
			want{kind: KindRelative, status: StatusError, path: "x", code: inv, reason: `contains ".."`}, nil},
		{"name missing", `{"source":"./x"}`,
			want{kind: KindRelative, status: StatusError, path: "x", code: inv, reason: `plugins[0]: has no "name"`}, nil},
		{"name mistyped", `{"name":7,"source":"./x"}`,
			want{kind: KindRelative, status: StatusError, path: "x", code: inv, reason: `"name" must be a string, found a number`}, nil},
		{"source missing", `{"name":"p"}`,
			want{kind: KindUnknown, status: StatusError, code: inv, reason: `marketplace entry "p" (plugins[0]): has no "source"`}, nil},
		{"entry not object", `"./x"`,
			want{kind: KindUnknown, status: StatusError, code: inv, reason: "expected an object"}, nil},
		{"mistyped version is refused, as Claude Code refuses it", `{"name":"p","source":"./x","version":1}`,
			want{kind: KindRelative, status: StatusError, path: "x", code: inv, reason: "plugins[0].version: must be a string, found a number"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, e := oneEntry(t, "", tt.entry, Options{}, Parse)
			check(t, e, tt.w)
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

func TestCodexSources(t *testing.T) {
	t.Parallel()
	inv := plugind.CodeInvalidSource
	tests := []struct {
		name, entry string
		w           want
	}{
		{"local root", `{"name":"p","source":{"source":"local","path":"./"}}`, want{kind: KindRelative, status: StatusReady, path: "."}},
		{"local nested", `{"name":"p","source":{"source":"local","path":"./plugins/p"}}`, want{kind: KindRelative, status: StatusReady, path: "plugins/p"}},
		{"local bare", `{"name":"p","source":{"source":"local","path":"plugins/p"}}`, want{kind: KindRelative, status: StatusReady, path: "plugins/p"}},
		{"local escaping", `{"name":"p","source":{"source":"local","path":"../p"}}`, want{kind: KindRelative, status: StatusError, code: inv, reason: `source.path "../p" contains a ".." segment`}},
		{"local absolute", `{"name":"p","source":{"source":"local","path":"/srv/p"}}`, want{kind: KindRelative, status: StatusError, code: inv, reason: "is absolute"}},
		{"local no path", `{"name":"p","source":{"source":"local"}}`, want{kind: KindRelative, status: StatusError, code: inv, reason: `has no "path"`}},
		{"local mistyped path", `{"name":"p","source":{"source":"local","path":["x"]}}`, want{kind: KindRelative, status: StatusError, code: inv, reason: "source.path must be a string"}},
		{"string source", `{"name":"p","source":"./plugins/p"}`, want{kind: KindRelative, status: StatusReady, path: "plugins/p"}},
		{"not available", `{"name":"p","source":{"source":"local","path":"./p"},"policy":{"installation":"NOT_AVAILABLE"}}`, want{kind: KindRelative, status: StatusSkipped, path: "p", code: inv, reason: "NOT_AVAILABLE"}},
		{"installed by default", `{"name":"p","source":{"source":"local","path":"./p"},"policy":{"installation":"INSTALLED_BY_DEFAULT"}}`, want{kind: KindRelative, status: StatusReady, path: "p"}},
		{"url pinned", `{"name":"p","source":{"source":"url","url":"https://github.com/a/b","sha":"` + sha1 + `"}}`, want{kind: KindURL, status: StatusReady, owner: "a", repo: "b", sha: sha1}},
		{"url relative", `{"name":"p","source":{"source":"url","url":"./"}}`, want{kind: KindURL, status: StatusSkipped, code: plugind.CodeNotPinnable, reason: "not a repository URL"}},
		{"strict is not codex", `{"name":"p","source":"./p","strict":false}`, want{kind: KindRelative, status: StatusReady, path: "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, e := oneEntry(t, "", tt.entry, Options{}, ParseCodex)
			check(t, e, tt.w)
		})
	}
}

func TestDuplicateNames(t *testing.T) {
	t.Parallel()
	doc := `{"name":"m","owner":{"name":"o"},"plugins":[
		{"name":"alpha","source":"./a"},
		{"name":"beta","source":"./b"},
		{"name":"alpha","source":"./a2"},
		{"name":"Beta","source":"../escape"},
		{"name":"gamma","source":"./g"},
		{"name":"alpha","source":{"source":"npm","package":"x"}}
	]}`
	m, err := Parse([]byte(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := []Status{StatusError, StatusError, StatusError, StatusError, StatusReady, StatusError}
	for i, e := range m.Entries {
		if e.Status != wantStatus[i] {
			t.Errorf("plugins[%d] %q: status %s, want %s (%s)", i, e.Name, e.Status, wantStatus[i], e.Reason)
		}
		if wantStatus[i] == StatusError && (!strings.Contains(e.Reason, "duplicate name") || e.Code != plugind.CodeInvalidSource) {
			t.Errorf("plugins[%d] reason %q code %q", i, e.Reason, e.Code)
		}
	}
	if r := m.Entries[0].Reason; !strings.Contains(r, `plugins[2] "alpha"`) || !strings.Contains(r, `plugins[5] "alpha"`) {
		t.Errorf("reason does not name the other entries: %q", r)
	}
	// The case-variant duplicate keeps its own problem too.
	if r := m.Entries[3].Reason; !strings.Contains(r, `plugins[1] "beta"`) || !strings.Contains(r, `".."`) {
		t.Errorf("combined reason %q", r)
	}
	if r, s, e := m.Counts(); r != 1 || s != 0 || e != 5 {
		t.Errorf("counts %d/%d/%d", r, s, e)
	}
}

func TestDuplicateReasonIsBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"name":"m","owner":{"name":"o"},"plugins":[`)
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"name":"same","source":"./x"}`)
	}
	b.WriteString(`]}`)
	m, err := Parse([]byte(b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Entries[0].Reason
	if !strings.Contains(r, "and 44 more") || len(r) > 400 {
		t.Errorf("reason %q", r)
	}
	if _, _, e := m.Counts(); e != 50 {
		t.Errorf("errored %d, want 50", e)
	}
}

func TestCheckRefAcceptsRealRefs(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"main", "master", "v1.0.1", "release/v2", "qwen-mm-plugins-api-v1.0.5", "feature/x_y", sha1} {
		if err := checkRef(ref); err != nil {
			t.Errorf("checkRef(%q) = %v", ref, err)
		}
	}
	for _, ref := range []string{"", "-x", "a..b", "a b", "@", "a@{1}", "/a", "a/", "a//b", "a.", "a.lock", "a~1", "a:b", "a?", "a*", "a[", `a\b`, "a/.b", ".a"} {
		if err := checkRef(ref); err == nil {
			t.Errorf("checkRef(%q) accepted", ref)
		}
	}
}

func TestReasonsAreSentences(t *testing.T) {
	t.Parallel()
	// Every non-ready reason names the entry by name and index.
	m, err := Parse(readTestdata(t, "claude.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range m.Entries {
		if e.Status == StatusReady {
			continue
		}
		prefix := fmt.Sprintf("marketplace entry %q (plugins[%d]): ", e.Name, i)
		if !strings.HasPrefix(e.Reason, prefix) || len(e.Reason) < len(prefix)+15 {
			t.Errorf("reason %q lacks %q or a problem", e.Reason, prefix)
		}
	}
}
