package main

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// TestPrivateHTTPSHostFromTheCommandLine: a private repository on a
// generic host (basic auth) installs with the password git's own
// credential-store helper holds, configured in a throwaway
// GIT_CONFIG_GLOBAL; a wrong password is refused, saying where it came
// from. The password is never in the output, the registry or anything
// else in the home, and the refused install writes nothing.
func TestPrivateHTTPSHostFromTheCommandLine(t *testing.T) {
	t.Parallel()
	const user, password = "alice", "pw-private-0123456789"
	plain := fakegithub.New(t, fakegithub.WithPlainGit(), fakegithub.WithBasicAuth(user, password))
	plain.CreateRepoAt("team/tools").Commit("main", pluginTree("tools"))
	u, _ := url.Parse(plain.URL)
	for _, tc := range []struct {
		name, stored string
		ok           bool
	}{
		{"the stored password", password, true},
		{"a wrong password", "wrong-pw-9876543210", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			userHome, home := t.TempDir(), t.TempDir()
			store := filepath.Join(userHome, "git-credentials")
			if err := os.WriteFile(store, []byte("http://"+user+":"+tc.stored+"@"+u.Host+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			gitconfig := filepath.Join(userHome, "gitconfig")
			if err := os.WriteFile(gitconfig, []byte("[credential]\n\thelper = store --file="+store+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{
				"REASONIX_URL_REWRITE=https://git.example.test/=" + plain.URL + "/",
				"HOME=" + userHome, "GIT_CONFIG_GLOBAL=" + gitconfig, "GIT_CONFIG_NOSYSTEM=1",
			}
			r := run(t, home, env, "plugin", "install", "https://git.example.test/team/tools.git", "--yes")
			out := r.stdout + r.stderr
			if tc.ok != (r.code == 0) {
				t.Fatalf("exit %d\n%s", r.code, out)
			}
			if !tc.ok && !strings.Contains(out, "refused the credentials from a git credential helper") {
				t.Errorf("the refusal does not say where the credential came from:\n%s", out)
			}
			if strings.Contains(out, tc.stored) {
				t.Errorf("the output holds the password:\n%s", out)
			}
			found := false
			_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if b, _ := os.ReadFile(p); strings.Contains(string(b), tc.stored) {
						t.Errorf("%s holds the password", p)
					}
					found = found || d.Name() == "plugin-packages.json"
				}
				return nil
			})
			if found != tc.ok {
				t.Errorf("registry written: %v, want %v", found, tc.ok)
			}
		})
	}
}
