package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/source"
)

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// TestOpenRefusesABadEnvironment: a bad host or mirror setting fails Open
// with an invalid-source error naming it, before the home is touched.
func TestOpenRefusesABadEnvironment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"rewrite", map[string]string{"REASONIX_URL_REWRITE": "no-equals-sign"}, "REASONIX_URL_REWRITE"},
		{"mirror only without a mirror", map[string]string{"REASONIX_MIRROR_ONLY": "1"}, "needs REASONIX_MIRROR"},
		{"mirror in the clear", map[string]string{"REASONIX_MIRROR": "http://mirror.example.com"}, "in the clear"},
		{"checksum log without a key", map[string]string{"REASONIX_CHECKSUM_LOG": "https://log.example.com"}, "REASONIX_CHECKSUM_LOG"},
		{"checksum log in the clear", map[string]string{"REASONIX_CHECKSUM_LOG": "log.example+e22ad288+AacbRZXbYbOI+nLMxsrmcK/uglQM2AHyZHzbB+zesvRV http://log.example.com"}, "must be https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := filepath.Join(t.TempDir(), "home")
			tc.env["REASONIX_HOME"] = home
			a, err := Open(context.Background(), OpenOptions{Getenv: getenv(tc.env)})
			if err == nil {
				a.Close()
				t.Fatal("opened")
			}
			if plugind.CodeOf(err) != plugind.CodeInvalidSource || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v (code %q), want invalid source naming %q", err, plugind.CodeOf(err), tc.want)
			}
			if _, err := os.Lstat(home); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the home was made: %v", err)
			}
		})
	}
}

// TestOpenReadOnlyLeavesNoHome: a command that only reads sees an empty
// home where none exists, and makes none.
func TestOpenReadOnlyLeavesNoHome(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	a, err := Open(context.Background(), OpenOptions{Getenv: getenv(map[string]string{"REASONIX_HOME": home}), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !errors.Is(a.StoreErr, ErrNoHome) || !errors.Is(a.CacheErr, ErrNoHome) || a.Store != nil || a.Cache != nil {
		t.Fatalf("store %v (%v), cache %v (%v)", a.Store, a.StoreErr, a.Cache, a.CacheErr)
	}
	if list, err := a.Installer.List(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("list: %v %v", list, err)
	}
	if _, err := os.Lstat(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the home was made: %v", err)
	}
}

// TestOpenDegradesWithoutAStore: an unusable snapshot store is a warning,
// and every plan is refused saying why, while the registry still reads.
func TestOpenDegradesWithoutAStore(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "store"), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := Open(context.Background(), OpenOptions{Getenv: getenv(map[string]string{"REASONIX_HOME": home})})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Store != nil || a.StoreErr == nil || len(a.Warnings) == 0 || !strings.Contains(strings.Join(a.Warnings, "\n"), "snapshot store is unusable") {
		t.Fatalf("store %v (%v), warnings %q", a.Store, a.StoreErr, a.Warnings)
	}
	resp, err := a.Installer.Install(context.Background(), installer.Request{Source: mustSource("git:github.com/acme/tools")}, installer.Approval{DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "is unusable") {
		t.Fatalf("plan without a store: %+v %v", resp, err)
	}
	if list, err := a.Installer.List(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("list without a store: %v %v", list, err)
	}
}

// TestOpenPutsTheMirrorInFront: with REASONIX_MIRROR set, remote sources
// go to the mirror first, and upstream when it is down (with a warning);
// with REASONIX_MIRROR_ONLY=1 never upstream.
func TestOpenPutsTheMirrorInFront(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name":"tools","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: s\n---\nbody\n",
	})
	for _, only := range []bool{false, true} {
		env := map[string]string{
			"REASONIX_HOME":           filepath.Join(t.TempDir(), "home"),
			"REASONIX_GITHUB_URL":     gh.URL,
			"REASONIX_GITHUB_API_URL": gh.APIURL,
			"REASONIX_URL_REWRITE":    "https://=http://127.0.0.1:1/",
			// A mirror nobody listens at: down.
			"REASONIX_MIRROR": "http://127.0.0.1:1",
		}
		if only {
			env["REASONIX_MIRROR_ONLY"] = "1"
		}
		a, err := Open(context.Background(), OpenOptions{Getenv: getenv(env)})
		if err != nil {
			t.Fatal(err)
		}
		gh.ResetCounts()
		resp, err := a.Installer.Install(context.Background(), installer.Request{Source: mustSource("git:github.com/acme/tools")}, installer.Approval{DryRun: true})
		a.Close()
		upstream := gh.Counts().Total
		switch {
		case only && (err == nil || upstream != 0):
			t.Errorf("mirror only, mirror down: %v, %d upstream requests; want a failure and none", err, upstream)
		case !only && (err != nil || upstream == 0 || !strings.Contains(strings.Join(resp.Warnings, "\n"), "over the mirror failed")):
			t.Errorf("mirror down: %v, %d upstream requests, warnings %q; want upstream, saying so", err, upstream, resp.Warnings)
		}
	}
}

// mustSource is source.FromText for a source a test names itself: it
// panics on an error, as regexp.MustCompile does.
func mustSource(text string) source.Source {
	s, err := source.FromText(text)
	if err != nil {
		panic(err)
	}
	return s
}
