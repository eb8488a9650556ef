package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/sshd"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// sshRepo opens the source raw (naming git.example.test) at the real sshd,
// as a rewrite would: the transport URL names the loopback address.
func sshRepo(t *testing.T, srv *sshd.Server, raw, home string, net host.NetConfig) *Repo {
	t.Helper()
	src, err := source.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(src.URL(), "git.example.test", srv.Addr(), 1)
	return New(src, Config{URL: url, SSH: &SSHConfig{Dial: host.NewDialer(net).DialContext, Dir: filepath.Join(home, ".ssh"), User: srv.User}})
}

// TestSSHFetchBothSpellings: a real sshd serves a bare repository through
// git-upload-pack; both SSH spellings list its refs and fetch its tree,
// with the key file and known_hosts of a throwaway home.
func TestSSHFetchBothSpellings(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	c1 := srv.Repo(t, "tools", map[string]string{"a.txt": "one", "plugins/x/b.txt": "two"})
	c2 := srv.Commit(t, "tools", map[string]string{"a.txt": "three"})
	home := srv.Home(t, srv.KnownHostsLine())
	p := srv.Path("tools")
	for _, raw := range []string{"ssh://" + srv.User + "@git.example.test" + p, srv.User + "@git.example.test:" + p + "#main"} {
		t.Run(raw, func(t *testing.T) {
			repo := sshRepo(t, srv, raw, home, host.NetConfig{})
			ctx := context.Background()
			pin, err := repo.Resolve(ctx, repo.Source().Ref, nil)
			if err != nil || pin.SHA != c2 {
				t.Fatalf("Resolve = %v, %v; want %s", pin.SHA, err, c2)
			}
			if err := repo.Reachable(ctx, c1, ""); err != nil {
				t.Errorf("Reachable(%s): %v", c1, err)
			}
			dest := filepath.Join(t.TempDir(), "tree")
			f, err := repo.Fetch(ctx, c1, dest, host.FetchOptions{Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := readTree(t, dest); got["a.txt"] != "one" || got["plugins/x/b.txt"] != "two" || !f.Verified {
				t.Errorf("fetched %v (%+v)", got, f)
			}
		})
	}
	missing := sshRepo(t, srv, "ssh://"+srv.User+"@git.example.test"+srv.Path("nope"), home, host.NetConfig{})
	if _, err := missing.Refs(context.Background()); !host.IsNotFound(err) {
		t.Errorf("a missing repository: %v, want not found", err)
	}
}

// TestSSHHostKeyRefused: an unknown host key, a changed one and no
// known_hosts at all are refused before any key is offered, naming the
// host, the key's SHA256 fingerprint and what to do; nothing is written.
func TestSSHHostKeyRefused(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	srv.Repo(t, "tools", map[string]string{"a.txt": "one"})
	other, _, err := ed25519Key(t)
	if err != nil {
		t.Fatal(err)
	}
	fp := ssh.FingerprintSHA256(srv.HostKey)
	host127 := "[127.0.0.1]:" + strings.Split(srv.Addr(), ":")[1]
	for _, tc := range []struct {
		name, known string
		says        []string
	}{
		{"no known_hosts", "", []string{"is not in", fp, "ssh-keyscan -p"}},
		{"unknown", "[other.example.test]:22 " + other, []string{"is not in", fp, host127}},
		{"changed", host127 + " " + other, []string{"CHANGED", fp, "ssh-keygen -R '" + host127 + "'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := srv.Home(t, tc.known)
			repo := sshRepo(t, srv, "ssh://"+srv.User+"@git.example.test"+srv.Path("tools"), home, host.NetConfig{})
			dest := filepath.Join(t.TempDir(), "tree")
			_, err := repo.Fetch(context.Background(), strings.Repeat("a", 40), dest, host.FetchOptions{})
			var keyErr *HostKeyError
			if !errors.As(err, &keyErr) || !host.Fatal(err) || plugind.CodeOf(err) != plugind.CodeSourceUnreadable {
				t.Fatalf("err = %v, want a final host key refusal", err)
			}
			for _, w := range tc.says {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\ndoes not say %q", err, w)
				}
			}
			if _, err := os.Stat(dest); !os.IsNotExist(err) {
				t.Errorf("something was written at %s", dest)
			}
			if b, _ := os.ReadFile(filepath.Join(home, ".ssh", "known_hosts")); strings.TrimSpace(string(b)) != tc.known {
				t.Errorf("known_hosts changed: %q", b)
			}
		})
	}
}

// TestSSHRefusals: built for the team mirror (PublicOnly), the SSH dial
// goes through the same dialer as HTTP and refuses a loopback address
// before anything is sent; with no key the server authorizes, the refusal
// says which keys were tried, and that an encrypted key file was skipped.
func TestSSHRefusals(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	srv.Repo(t, "tools", map[string]string{"a.txt": "one"})
	raw := "ssh://" + srv.User + "@git.example.test" + srv.Path("tools")
	t.Run("public addresses only", func(t *testing.T) {
		home := srv.Home(t, srv.KnownHostsLine())
		_, err := sshRepo(t, srv, raw, home, host.NetConfig{PublicOnly: true}).Refs(context.Background())
		var refused *host.AddressRefusedError
		if !errors.As(err, &refused) || !host.Fatal(err) {
			t.Fatalf("err = %v, want the address refused", err)
		}
	})
	t.Run("no key accepted", func(t *testing.T) {
		home := srv.Home(t, srv.KnownHostsLine())
		if err := os.Remove(filepath.Join(home, ".ssh", "id_ed25519")); err != nil {
			t.Fatal(err)
		}
		encrypted := filepath.Join(home, ".ssh", "id_rsa")
		sshdRun(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", encrypted)
		_, err := sshRepo(t, srv, raw, home, host.NetConfig{}).Refs(context.Background())
		if !errors.Is(err, host.ErrRefused) || !strings.Contains(err.Error(), "no key was accepted") || !strings.Contains(err.Error(), encrypted+" skipped: it is encrypted") {
			t.Fatalf("err = %v", err)
		}
	})
}

func ed25519Key(t *testing.T) (string, ssh.PublicKey, error) {
	dir := t.TempDir()
	sshdRun(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "k"))
	b, err := os.ReadFile(filepath.Join(dir, "k.pub"))
	if err != nil {
		return "", nil, err
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(b)
	return strings.Join(strings.Fields(string(b))[:2], " "), k, err
}

func sshdRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}
