package source

import (
	"strings"
	"testing"

	"reasonix.io/plugind"
)

func TestParseRemoteAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src         string
		owner, repo string
		treeRest    string
	}{
		{"git:github.com/acme/tools", "acme", "tools", ""},
		{"git:github.com/acme/tools.git", "acme", "tools", ""},
		{"https://github.com/acme/tools", "acme", "tools", ""},
		{"https://github.com/acme/tools.git", "acme", "tools", ""},
		{"https://github.com/acme/tools/", "acme", "tools", ""},
		{"https://github.com/obra/superpowers", "obra", "superpowers", ""},
		{"https://github.com/acme/tools/tree/main", "acme", "tools", "main"},
		{"https://github.com/acme/tools/tree/release/v2/plugins/x", "acme", "tools", "release/v2/plugins/x"},
		{"https://github.com/acme/my.repo_1/tree/v1.0.0/a", "acme", "my.repo_1", "v1.0.0/a"},
	}
	for _, tt := range tests {
		r, err := ParseRemote(tt.src)
		if err != nil {
			t.Errorf("ParseRemote(%q): %v", tt.src, err)
			continue
		}
		if r.Owner != tt.owner || r.Repo != tt.repo || r.TreeRest != tt.treeRest {
			t.Errorf("ParseRemote(%q) = %+v", tt.src, r)
		}
	}
}

func TestParseRemoteRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want string // a fragment of the message
	}{
		{"https://user:pw@github.com/acme/tools", "userinfo"},
		{"https://github.com:8443/acme/tools", "port"},
		{"https://github.com/acme/tools?ref=main", "queries"},
		{"https://github.com/acme/tools#readme", "fragments"},
		{"https://github.com/acme/tools/tree/main/../x", "'..'"},
		{"https://github.com/acme/tools/tree/main/./x", "'.'"},
		{"https://github.com/acme/tools/tree/main%2fx", "encoded"},
		{"https://github.com/acme/tools/tree/main%5Cx", "encoded"},
		{`https://github.com/acme/tools/tree/main\x`, "encoded"},
		{"https://github.com/acme//tools", "empty path segment"},
		{"https://github.com/acme/tools/tree/main//x", "empty path segment"},
		{"https://github.com/acme/to ols", "whitespace"},
		{"https://github.com/acme/tools/tree/ma%20in", "whitespace"},
		{"https://github.com/acme/tools\x00", "control"},
		{"https://github.com/acme/tools/blob/main/README.md", "blob"},
		{"https://github.com/acme/tools/issues/1", "issues"},
		{"https://github.com/acme/tools/pull/1", "pull"},
		{"https://github.com/acme/tools/tree", "not a repository or a tree"},
		{"https://github.com/-acme/tools", "owner"},
		{"https://github.com/ac_me/tools", "owner"},
		{"https://github.com/acme/to$ols", "repository name"},
		{"https://github.com/acme", "expected"},
		{"https://gitlab.com/acme/tools", "not github.com"},
		{"http://github.com/acme/tools", "https"},
		{"git:github.com/acme/tools/extra", "expected git:github.com/OWNER/REPO"},
		{"git:gitlab.com/acme/tools", "not github.com"},
		{"https://github.com/acme/tools/tree/-upload-pack=x", "'-'"},
		{"ftp://github.com/acme/tools", "not a recognised source"},
	}
	for _, tt := range tests {
		_, err := ParseRemote(tt.src)
		if err == nil {
			t.Errorf("ParseRemote(%q) accepted", tt.src)
			continue
		}
		if plugind.CodeOf(err) != plugind.CodeInvalidSource {
			t.Errorf("ParseRemote(%q) code = %q", tt.src, plugind.CodeOf(err))
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseRemote(%q) = %v, want it to mention %q", tt.src, err, tt.want)
		}
	}
}

func TestSplitTree(t *testing.T) {
	t.Parallel()
	refs := []string{"main", "release", "release/v2", "v1.0"}
	tests := []struct {
		rest      string
		refs      []string
		ref, path string
	}{
		{"main", refs, "main", ""},
		{"main/plugins/x", refs, "main", "plugins/x"},
		{"release/v2/plugins/x", refs, "release/v2", "plugins/x"},
		{"release/v3/plugins/x", refs, "release", "v3/plugins/x"},
		{"feature/a/b", nil, "feature", "a/b"},
		{"0123456789abcdef0123456789abcdef01234567/p", refs, "0123456789abcdef0123456789abcdef01234567", "p"},
	}
	for _, tt := range tests {
		r := &Remote{Owner: "o", Repo: "r", TreeRest: tt.rest}
		r.SplitTree(tt.refs)
		if r.Ref != tt.ref || r.Path != tt.path {
			t.Errorf("SplitTree(%q) = %q, %q; want %q, %q", tt.rest, r.Ref, r.Path, tt.ref, tt.path)
		}
	}
}
