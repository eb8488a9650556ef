package mirror_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/meta"
)

// Requests for one ref, spread over two replicas while upstream is slow,
// go upstream once: the lease below the Cached layer is held until the
// answer is stored, so every other request — on either replica — waits
// for it and then finds it, and no lease is left behind.
func TestOneUpstreamCallAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", map[string]string{"a.md": "a"})
	up, err := mirrortest.Upstream(f.gh)
	if err != nil {
		t.Fatal(err)
	}
	second := f.eng.StartReplica(t, mirrortest.Options{Upstream: up})
	f.gh.Fault(fakegithub.PathPrefix("/api/v3/repos/acme/tools/commits"), fakegithub.Fault{Stall: 300 * time.Millisecond, Times: 1})

	const n = 12
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		base := f.rep.URL
		if i%2 == 1 {
			base = second.URL
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, base+"/v1/resolve?repo=https://github.com/acme/tools.git&ref=main", nil)
			req.Header.Set("Authorization", "Bearer "+f.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), sha) {
				errs <- fmt.Errorf("%s: %d %s", base, resp.StatusCode, b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c := f.gh.RepoCounts("acme", "tools"); c.APICommits != 1 {
		t.Fatalf("upstream resolved the ref %d times for %d requests, want once: %+v", c.APICommits, n, c)
	}
	ctx := context.Background()
	log, err := f.eng.DB.AuditLog(ctx, meta.AuditFilter{Action: "resolve"})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, e := range log {
		outcomes[e.Outcome]++
	}
	if len(log) != n || outcomes["upstream"] != 1 || outcomes["waited"] == 0 || outcomes["upstream"]+outcomes["waited"]+outcomes["hit"] != n {
		t.Fatalf("audit outcomes %v for %d requests, want one upstream, some waited, the rest hits", outcomes, n)
	}
	if ls, err := f.eng.DB.Leases(ctx, ""); err != nil || len(ls) != 0 {
		t.Fatalf("leases left behind: %+v %v", ls, err)
	}
}
