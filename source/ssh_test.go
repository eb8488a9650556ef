package source

import (
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/secrets"
)

// TestSSHSources: both SSH spellings of one repository are one Source,
// written back in the one canonical form, keyed apart from the same path
// over HTTPS; a pinned one records and reads back like any non-GitHub
// source.
func TestSSHSources(t *testing.T) {
	t.Parallel()
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		raw, text, key, url, ref string
	}{
		{"git@git.example.test:team/tools.git", "ssh://git@git.example.test/team/tools.git", "ssh://git@git.example.test/team/tools", "ssh://git@git.example.test/team/tools.git", ""},
		{"ssh://git@git.example.test/team/tools.git", "ssh://git@git.example.test/team/tools.git", "ssh://git@git.example.test/team/tools", "ssh://git@git.example.test/team/tools.git", ""},
		{"ssh://git@git.example.test:22/team/tools.git", "ssh://git@git.example.test/team/tools.git", "ssh://git@git.example.test/team/tools", "ssh://git@git.example.test/team/tools.git", ""},
		{"git@git.example.test:/team/tools.git#v1", "ssh://git@git.example.test/team/tools.git#v1", "ssh://git@git.example.test/team/tools", "ssh://git@git.example.test/team/tools.git", "v1"},
		{"ssh://git.example.test:2222/srv/git/x#release/v2", "ssh://git.example.test:2222/srv/git/x#release/v2", "ssh://git.example.test:2222/srv/git/x", "ssh://git.example.test:2222/srv/git/x", "release/v2"},
		{"Alice@Git.Example.Test:~/x.git", "ssh://Alice@git.example.test/~/x.git", "ssh://Alice@git.example.test/~/x", "ssh://Alice@git.example.test/~/x.git", ""},
	}
	for _, tt := range tests {
		s, err := Parse(tt.raw)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.raw, err)
			continue
		}
		if !s.IsSSH() || s.Kind != Git || !s.IsRemote() || s.String() != tt.text || s.Key() != tt.key || s.URL() != tt.url || s.Ref != tt.ref {
			t.Errorf("Parse(%q) = %q key %q url %q ref %q ssh %v; want %q %q %q %q", tt.raw, s, s.Key(), s.URL(), s.Ref, s.IsSSH(), tt.text, tt.key, tt.url, tt.ref)
		}
		if back, err := Parse(s.String()); err != nil || back != s {
			t.Errorf("%q does not read back as itself: %+v %v", s, back, err)
		}
		rec := s.WithSubdir("plugins/x").Recorded(sha, "plugins/x")
		if want := strings.TrimSuffix(tt.text, "#"+tt.ref) + "#" + sha; rec.String() != want || rec.RecordedSubdir("plugins/x") != "plugins/x" {
			t.Errorf("Recorded(%q) = %q beside %q, want %q", s, rec, rec.RecordedSubdir("plugins/x"), want)
		}
		if back, err := ParseRecorded(rec.String()); err != nil || back != rec {
			t.Errorf("recorded %q reads back as %+v, %v", rec, back, err)
		}
	}
	scp, _ := Parse("git@git.example.test:team/tools.git")
	https, _ := Parse("https://git.example.test/team/tools.git")
	if scp.Key() == https.Key() || scp == https {
		t.Errorf("the SSH and HTTPS repositories share the key %q", scp.Key())
	}
	// On github.com an SSH spelling is the GitHub source, as before.
	for _, raw := range []string{"git@github.com:acme/tools.git", "ssh://git@github.com/acme/tools"} {
		if s, err := Parse(raw); err != nil || s.Kind != GitHub || s.IsSSH() || s.Key() != "github.com/acme/tools" {
			t.Errorf("Parse(%q) = %+v, %v; want the GitHub source", raw, s, err)
		}
	}
}

// TestSSHRefusals: what an SSH source may not be, refused before any
// network with the reason, a password masked.
func TestSSHRefusals(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want string }{
		{"ssh://alice:s3cr3t-pw@git.example.test/x.git", "password"},
		{"alice:s3cr3t-pw@git.example.test:x.git", "password"},
		{"ssh://-oProxyCommand=touch%20x/x.git", "not a valid URL"},
		{"ssh://-oProxyCommand=x.example.test/x.git", "not a valid host name"},
		{"git@-oProxyCommand.example.test:x.git", "not a valid host name"},
		{"-oProxyCommand=x@git.example.test:x.git", "user name"},
		{"ssh://git@git.example.test/-upload-pack=x", "not starting with '-'"},
		{"ssh://git@git.example.test/a/../b.git", "'..'"},
		{"ssh://git@git.example.test/a/./b.git", "'.'"},
		{"ssh://git@git.example.test/a//b.git", "empty path segment"},
		{"ssh://git@git.example.test/a%2fb.git", "encoded"},
		{"ssh://git@git.example.test/a%0ab.git", "control"},
		{"ssh://git@git.example.test/a.git?x=1", "queries"},
		{"ssh://git@git.example.test:0/a.git", "port"},
		{"ssh://git@git.example.test:99999/a.git", "port"},
		{"ssh://git@git.example.test:022/a.git", "port"},
		{"ssh://git@127.0.0.1/a.git", "IP address"},
		{"ssh://git@localhost.localhost/a.git", "this machine"},
		{"ssh://git@intranet/a.git", "fully qualified"},
		{"git@git.example.test:x.git#-x", "'-'"},
		{"git@git.example.test:x.git#a..b", "'..'"},
		{"git@git.example.test:~", "no repository path"},
		{"git@github.com:acme/tools#v1", "on github.com"},
		{"ssh://git@github.com:2222/acme/tools", "on github.com"},
		{"ext::ssh -oProxyCommand=x git.example.test", "whitespace"},
		{"ext::x", "remote-helper"},
	} {
		_, err := Parse(tt.raw)
		if err == nil || plugind.CodeOf(err) != plugind.CodeInvalidSource || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want install.invalid_source saying %q", tt.raw, err, tt.want)
			continue
		}
		if strings.Contains(tt.raw, "s3cr3t") && (strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), secrets.Masked)) {
			t.Errorf("Parse(%q) does not mask the password: %v", tt.raw, err)
		}
	}
}
