package resolver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host/mirror"
)

// TestHostsRuntimePolicy: the mirror's runtime rule as a plan reads it:
// read; unread with a reason when the mirror is down (the plan goes on, as
// fetches go upstream); an error when nothing may go around the mirror
// (REASONIX_MIRROR_ONLY=1, a refused token); "allow" without a mirror.
func TestHostsRuntimePolicy(t *testing.T) {
	t.Parallel()
	answer := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	up := answer(http.StatusOK, `{"runtime":"block-unpinned"}`)
	down := answer(http.StatusBadGateway, `{"error":"upstream failed"}`)
	refusing := answer(http.StatusForbidden, `{"error":"revoked"}`)
	for _, tc := range []struct {
		name    string
		mirror  *mirror.Config
		offline bool
		rule    policy.Runtime
		note    string
		err     string
	}{
		{name: "no mirror", rule: policy.RuntimeAllow},
		{name: "read", mirror: &mirror.Config{URLs: []string{up}}, rule: policy.RuntimeBlockUnpinned},
		{name: "down", mirror: &mirror.Config{URLs: []string{down}}, note: "every team mirror replica failed"},
		{name: "offline", mirror: &mirror.Config{URLs: []string{up}}, offline: true, note: "offline: the mirror is not asked"},
		{name: "down, mirror only", mirror: &mirror.Config{URLs: []string{down}, Only: true}, err: "every team mirror replica failed"},
		{name: "refused token", mirror: &mirror.Config{URLs: []string{refusing}, Token: "revoked"}, err: "refused the token"},
	} {
		h, err := NewHosts(HostConfig{Mirror: tc.mirror})
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.RuntimePolicy(context.Background(), tc.offline)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %+v %v; want an error saying %q", tc.name, got, err, tc.err)
			}
		case err != nil || got.Rule != tc.rule || !strings.Contains(got.Note, tc.note) || (tc.note == "") != (got.Note == ""):
			t.Errorf("%s: %+v %v; want %q %q", tc.name, got, err, tc.rule, tc.note)
		}
	}
}

// The rule read last is remembered in the home and applies, saying when,
// to a plan that is offline or finds the mirror down; not to another
// mirror's plans, and never under REASONIX_MIRROR_ONLY=1 when the mirror
// is down.
func TestHostsRuntimePolicyRemembered(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(`{"error":"upstream failed"}`))
			return
		}
		_, _ = w.Write([]byte(`{"runtime":"block-unpinned"}`))
	}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "mirror", "policy.json")
	open := func(cfg mirror.Config) *Hosts {
		cfg.PolicyFile = file
		h, err := NewHosts(HostConfig{Mirror: &cfg})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ctx := context.Background()
	if got, err := open(mirror.Config{URLs: []string{srv.URL}}).RuntimePolicy(ctx, false); err != nil || got.Rule != policy.RuntimeBlockUnpinned || got.Note != "" {
		t.Fatalf("read: %+v %v", got, err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the rule is not remembered privately: %v %v", fi, err)
	}
	failing.Store(true)
	for _, offline := range []bool{true, false} {
		got, err := open(mirror.Config{URLs: []string{srv.URL}}).RuntimePolicy(ctx, offline)
		if err != nil || got.Rule != policy.RuntimeBlockUnpinned || !strings.Contains(got.Note, "the rule it gave at ") {
			t.Errorf("offline %v: %+v %v; want the remembered rule, saying when it was read", offline, got, err)
		}
	}
	if got, err := open(mirror.Config{URLs: []string{"http://127.0.0.1:1"}}).RuntimePolicy(ctx, true); err != nil || got.Rule != "" {
		t.Errorf("another mirror: %+v %v; want no rule", got, err)
	}
	if got, err := open(mirror.Config{URLs: []string{srv.URL}, Only: true}).RuntimePolicy(ctx, false); err == nil {
		t.Errorf("mirror only, down: %+v; want an error", got)
	}
}
