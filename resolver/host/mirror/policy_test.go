package mirror

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host"
)

// policyMirror is a replica answering GET /v1/policy with status and body,
// counting the requests and checking the token.
func policyMirror(t *testing.T, status int, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	n := &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path != "/v1/policy" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"no token","errorCode":"install.source_unreadable"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, n
}

// TestRuntimePolicy: the client reads the mirror's runtime rule with its
// token, failing over from a replica that is down, keeps it (one request
// for many plans), and refuses a rule it does not know or an unreadable
// answer; a refused token is host.ErrRefused.
func TestRuntimePolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	down, downN := policyMirror(t, http.StatusServiceUnavailable, `{"error":"database down","errorCode":"install.source_unreadable"}`)
	up, upN := policyMirror(t, http.StatusOK, `{"runtime":"block-unpinned"}`)
	c, err := New(Config{URLs: []string{down.URL, up.URL}, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rule, err := c.RuntimePolicy(ctx)
		if err != nil || rule != policy.RuntimeBlockUnpinned {
			t.Fatalf("rule %q, %v; want block-unpinned", rule, err)
		}
	}
	if downN.Load() != 1 || upN.Load() != 1 {
		t.Errorf("requests: %d to the replica that is down, %d to the one up; want 1 and 1", downN.Load(), upN.Load())
	}
	for _, tc := range []struct {
		name, body, token string
		status            int
		want              []string
		refused           bool
	}{
		{name: "unknown rule", body: `{"runtime":"block-everything"}`, token: "tok", status: 200, want: []string{"does not know", `"block-everything"`}},
		{name: "not JSON", body: `<html>`, token: "tok", status: 200, want: []string{"unreadable answer"}},
		{name: "refused token", body: `{}`, token: "wrong", status: 200, want: []string{"refused the token"}, refused: true},
	} {
		srv, _ := policyMirror(t, tc.status, tc.body)
		c, err := New(Config{URLs: []string{srv.URL}, Token: tc.token})
		if err != nil {
			t.Fatal(err)
		}
		rule, err := c.RuntimePolicy(ctx)
		if err == nil {
			t.Errorf("%s: rule %q, want an error", tc.name, rule)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v does not say %q", tc.name, err, w)
			}
		}
		if errors.Is(err, host.ErrRefused) != tc.refused {
			t.Errorf("%s: ErrRefused %v, want %v (%v)", tc.name, errors.Is(err, host.ErrRefused), tc.refused, err)
		}
	}
}
