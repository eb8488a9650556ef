package resolver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
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
		name   string
		mirror *mirror.Config
		rule   policy.Runtime
		unread string
		err    string
	}{
		{name: "no mirror", rule: policy.RuntimeAllow},
		{name: "read", mirror: &mirror.Config{URLs: []string{up}}, rule: policy.RuntimeBlockUnpinned},
		{name: "down", mirror: &mirror.Config{URLs: []string{down}}, unread: "every team mirror replica failed"},
		{name: "down, mirror only", mirror: &mirror.Config{URLs: []string{down}, Only: true}, err: "every team mirror replica failed"},
		{name: "refused token", mirror: &mirror.Config{URLs: []string{refusing}, Token: "revoked"}, err: "refused the token"},
	} {
		h, err := NewHosts(HostConfig{Mirror: tc.mirror})
		if err != nil {
			t.Fatal(err)
		}
		rule, unread, err := h.RuntimePolicy(context.Background())
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q %q %v; want an error saying %q", tc.name, rule, unread, err, tc.err)
			}
		case err != nil || rule != tc.rule || !strings.Contains(unread, tc.unread) || (tc.unread == "") != (unread == ""):
			t.Errorf("%s: %q %q %v; want %q %q", tc.name, rule, unread, err, tc.rule, tc.unread)
		}
	}
}
