package source

import (
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// FuzzParse: whatever the string, Parse does not panic, refuses with
// install.invalid_source, and an accepted remote or marketplace-entry source
// spells itself back. The same string with a credential put where URLs carry
// them (userinfo, a query, a fragment) is refused without echoing it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"git:github.com/acme/tools", "https://github.com/acme/tools/tree/release/v2/x",
		"https://git.example.test/team/tools.git#v1", "https://u:SECRETVALUE@github.com/a/b",
		"https://github.com/a/b?token=SECRETVALUE", "name@market", "./x.zip", "git@github.com:a/b.git",
		"ext::sh", "gh:a/b", "https://[::1]/x.git", "https://a.b/%2e%2e/x.git",
		"ssh://git@git.example.test:2222/team/x.git#v1", "git@git.example.test:team/x#" + "0123456789abcdef0123456789abcdef01234567",
		"ssh://u:SECRETVALUE@git.example.test/x", "ssh://-oProxyCommand=x/y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !strings.Contains(raw, "SECRETVALUE") {
			for _, v := range []string{
				"https://u:SECRETVALUE@" + raw, "https://SECRETVALUE@" + raw,
				raw + "?access_token=SECRETVALUE", raw + "#token=SECRETVALUE",
				"https://" + raw + "?x=1&key=SECRETVALUE",
			} {
				if _, err := Parse(v); err != nil && strings.Contains(err.Error(), "SECRETVALUE") {
					t.Fatalf("Parse(%q) echoes a credential: %v", v, err)
				}
			}
		}
		s, err := Parse(raw)
		if err != nil {
			if plugind.CodeOf(err) != plugind.CodeInvalidSource {
				t.Fatalf("Parse(%q) error without the invalid_source code: %v", raw, err)
			}
			return
		}
		switch s.Kind {
		case LocalDir, LocalZip:
			if s.Path != raw {
				t.Fatalf("local source %q became %q", raw, s.Path)
			}
		case GitHub, Git, MarketEntry:
			again, err := Parse(s.String())
			if err != nil || again.String() != s.String() {
				t.Fatalf("Parse(%q).String() = %q does not parse back: %v", raw, s.String(), err)
			}
			if s.IsRemote() {
				key := s.Key()
				if s.IsSSH() {
					// An SSH key is its canonical URL: "ssh://" and a
					// user@ (a checked name, never a password) first.
					key = strings.TrimPrefix(key, "ssh://"+s.sshAuthority())
					if key == s.Key() || s.ssh.user != "" && !sshUserRE.MatchString(s.ssh.user) {
						t.Fatalf("Parse(%q) SSH key %q", raw, s.Key())
					}
					key = s.Host + key
				}
				if strings.ContainsAny(key, "?#@\\ ") {
					t.Fatalf("Parse(%q) key %q", raw, s.Key())
				}
				for _, seg := range strings.Split(key, "/") {
					if seg == "" || seg == "." || seg == ".." {
						t.Fatalf("Parse(%q) key %q has segment %q", raw, s.Key(), seg)
					}
				}
			}
		default:
			t.Fatalf("Parse(%q) accepted with kind %v", raw, s.Kind)
		}
	})
}
