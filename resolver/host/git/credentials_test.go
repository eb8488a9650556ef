package git

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

const (
	credUser     = "alice"
	credPassword = "pw-0123456789-credential"
)

// credEnv is a throwaway git configuration: HOME and GIT_CONFIG_GLOBAL in
// temporary folders, no system configuration, helper as the one helper.
func credEnv(t *testing.T, helper string) (env []string, home string) {
	t.Helper()
	home = t.TempDir()
	cfg := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[credential]\n\thelper = \""+helper+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"HOME=" + home, "GIT_CONFIG_GLOBAL=" + cfg, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}, home
}

// plainRepo is a private repository on a generic git host: the fake's
// plain-git mode behind basic auth (or none, opts empty).
func plainRepo(t *testing.T, opts ...fakegithub.Option) (*fakegithub.Server, source.Source) {
	t.Helper()
	fake := fakegithub.New(t, append([]fakegithub.Option{fakegithub.WithPlainGit()}, opts...)...)
	fake.CreateRepoAt("team/tools").Commit("main", map[string]string{"a.md": "v1"})
	src, err := source.Parse("https://git.example.test/team/tools.git")
	if err != nil {
		t.Fatal(err)
	}
	return fake, src
}

// TestCredentialStoreHelper: a generic host answers 401; git's own
// credential-store helper, configured in a throwaway GIT_CONFIG_GLOBAL,
// has the password for exactly that host; it is sent on the second
// request (never the first), and approved. A wrong one is refused, final,
// rejected (credential-store erases it) and never in the error.
func TestCredentialStoreHelper(t *testing.T) {
	t.Parallel()
	gate, src := plainRepo(t, fakegithub.WithBasicAuth(credUser, credPassword))
	for _, tc := range []struct {
		name, password string
		ok             bool
	}{
		{"right", credPassword, true},
		{"wrong", "not-the-password-xyz", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "store")
			u, _ := url.Parse(gate.URL)
			line := "http://" + credUser + ":" + tc.password + "@" + u.Host + "\n"
			if err := os.WriteFile(store, []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
			env, home := credEnv(t, "store --file="+store)
			before := len(gate.AuthSeen())
			repo := New(src, Config{URL: gate.URL + "/team/tools.git", Credentials: &host.Credentials{Home: home, Env: env}})
			_, err := repo.Refs(context.Background())
			seen := gate.AuthSeen()[before:]
			if len(seen) < 2 || seen[0] != "" || seen[1] != credUser+":"+tc.password {
				t.Errorf("requests carried %v, want anonymous first, then the stored credential", seen)
			}
			stored, _ := os.ReadFile(store)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(stored), tc.password) {
					t.Errorf("the store after approve: %q", stored)
				}
				return
			}
			if !errors.Is(err, host.ErrRefused) || !host.Fatal(err) || !strings.Contains(err.Error(), "refused the credentials from a git credential helper") {
				t.Errorf("err = %v, want a final refusal naming the helper", err)
			}
			if strings.Contains(err.Error(), tc.password) {
				t.Errorf("the error holds the password: %v", err)
			}
			if strings.Contains(string(stored), tc.password) {
				t.Errorf("a rejected credential stays stored: %q", stored)
			}
		})
	}
}

// TestCredentialHelperHangs: a helper that never answers costs the
// bounded wait (killed with its process group), then .netrc is tried, and
// the error says the helper did not answer.
func TestCredentialHelperHangs(t *testing.T) {
	t.Parallel()
	gate, src := plainRepo(t, fakegithub.WithBasicAuth(credUser, credPassword))
	env, home := credEnv(t, "!f() { sleep 60; }; f")
	repo := New(src, Config{URL: gate.URL + "/team/tools.git", Credentials: &host.Credentials{Home: home, Env: env, Timeout: time.Second}})
	start := time.Now()
	_, err := repo.Refs(context.Background())
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("took %s: the wait is not bounded", took)
	}
	if !errors.Is(err, host.ErrRefused) || host.IsNotFound(err) || !strings.Contains(err.Error(), "did not answer within 1s") {
		t.Fatalf("err = %v, want it to say the helper did not answer", err)
	}
}

// TestNetrc: with no helper, ~/.netrc's machine entry is used; a file
// others can read is warned about (and used), the password never logged.
func TestNetrc(t *testing.T) {
	t.Parallel()
	gate, src := plainRepo(t, fakegithub.WithBasicAuth(credUser, credPassword))
	env, home := credEnv(t, "")
	netrc := "machine other.example.test login bob password nope\n" +
		"machine 127.0.0.1 login " + credUser + " password " + credPassword + "\n" +
		"default login x password y\n"
	if err := os.WriteFile(filepath.Join(home, ".netrc"), []byte(netrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(home, ".netrc"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	repo := New(src, Config{URL: gate.URL + "/team/tools.git", Credentials: &host.Credentials{Home: home, Env: env, Log: log}, Log: log})
	if _, err := repo.Refs(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "readable by group or others (mode 0644)") || strings.Contains(logs.String(), credPassword) {
		t.Errorf("logs: %s", logs.String())
	}
}

// TestCredentialNotCarriedAcrossRedirect: after the host the credential
// belongs to redirects elsewhere (another port is another origin), the
// requests that follow — Go's redirect and go-git's moved endpoint — carry
// no Authorization there, even with a client that follows any redirect.
func TestCredentialNotCarriedAcrossRedirect(t *testing.T) {
	t.Parallel()
	fake, src := plainRepo(t)
	var mu sync.Mutex
	var leaked []string
	target, _ := url.Parse(fake.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			mu.Lock()
			leaked = append(leaked, r.URL.Path)
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	defer other.Close()
	// The credential's own host: a 401 without it, a redirect to the
	// other origin with it.
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != credUser || p != credPassword {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer gate.Close()
	store := filepath.Join(t.TempDir(), "store")
	u, _ := url.Parse(gate.URL)
	if err := os.WriteFile(store, []byte("http://"+credUser+":"+credPassword+"@"+u.Host+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env, home := credEnv(t, "store --file="+store)
	repo := New(src, Config{URL: gate.URL + "/team/tools.git", Client: &http.Client{}, Credentials: &host.Credentials{Home: home, Env: env}})
	if _, err := repo.Refs(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(leaked) > 0 {
		t.Errorf("the credential went to another origin: %v", leaked)
	}
}
