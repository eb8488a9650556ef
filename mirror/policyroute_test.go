package mirror_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/policy"
	mirrorclient "reasonix.io/plugind/resolver/host/mirror"
)

// TestPolicyRoute: GET /v1/policy tells a client with a token the
// operator's runtime rule ("allow" when the policy has none), audited;
// without a token it is refused like every /v1 route.
func TestPolicyRoute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc  string
		want policy.Runtime
	}{
		{`{"runtime": "block-unpinned", "block": ["github.com/evil"]}`, policy.RuntimeBlockUnpinned},
		{`{"block": ["github.com/evil"]}`, policy.RuntimeAllow},
	} {
		pol, err := policy.Parse([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, mirrortest.Options{Policy: pol})
		c, err := mirrorclient.New(mirrorclient.Config{URLs: []string{f.rep.URL}, Token: f.token})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.RuntimePolicy(context.Background())
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.doc, got, err, tc.want)
		}
		if resp, body := f.get(t, "/v1/policy", ""); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "REASONIX_MIRROR_TOKEN") {
			t.Errorf("without a token: %d %s", resp.StatusCode, body)
		}
		log, err := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "policy"})
		if err != nil || len(log) != 1 || log[0].Client != "tester" || log[0].Detail != string(tc.want) {
			t.Errorf("%s: audit %+v %v", tc.doc, log, err)
		}
	}
}
