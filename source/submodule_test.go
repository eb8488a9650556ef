package source

import (
	"strings"
	"testing"

	"reasonix.io/plugind"
)

func TestParseSubmoduleURL(t *testing.T) {
	t.Parallel()
	gh, err := Parse("https://github.com/acme/tools")
	if err != nil {
		t.Fatal(err)
	}
	other, err := Parse("https://git.example.test/group/team/tools.git")
	if err != nil {
		t.Fatal(err)
	}
	sshParent, err := Parse("ssh://git@git.example.test:2222/group/tools.git")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		parent Source
		raw    string
		want   string // the source's String(), or
		err    string // words of the refusal
	}{
		{gh, "../lib.git", "https://github.com/acme/lib", ""},
		{gh, "../lib", "https://github.com/acme/lib", ""},
		{gh, "./../../other/lib.git", "https://github.com/other/lib", ""},
		{other, "../lib.git", "https://git.example.test/group/team/lib.git", ""},
		{other, "../../shared/lib", "https://git.example.test/group/shared/lib", ""},
		{gh, "https://github.com/x/y.git", "https://github.com/x/y", ""},
		{gh, "git@github.com:x/y.git", "https://github.com/x/y", ""},
		{gh, "https://gitlab.example.test/x/y", "https://gitlab.example.test/x/y", ""},
		{gh, "../../../up.git", "", "climbs above the host"},
		{gh, "file:///srv/git/x.git", "", "file://"},
		{gh, "http://github.com/x/y.git", "", "plain http"},
		{gh, "ssh://git@github.com/x/y.git", "https://github.com/x/y", ""},
		{gh, "git@git.example.test:x/y.git", "ssh://git@git.example.test/x/y.git", ""},
		{sshParent, "../lib.git", "ssh://git@git.example.test:2222/group/lib.git", ""},
		{gh, "ssh://git@127.0.0.1/x/y.git", "", "IP address"},
		{gh, "/srv/git/x.git", "", "not a repository URL"},
		{gh, "https://bot:s3cr3t@github.com/x/y.git", "", "credentials"},
		{gh, "../x/../../y.git", "", "github.com"},
	}
	for _, tc := range tests {
		got, err := ParseSubmoduleURL(tc.parent, tc.raw)
		if tc.err != "" {
			if err == nil || plugind.CodeOf(err) != plugind.CodeInvalidSource || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.raw, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("%s: the credential leaked: %v", tc.raw, err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("%s: %v %v, want %s", tc.raw, got, err, tc.want)
		}
	}
}
