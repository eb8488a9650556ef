package fakegithub_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
)

// The budget counts unauthenticated REST requests whatever their answer,
// the tarball link included; git, archives and requests with a token are
// not counted. Once spent, REST answers 403 with Remaining 0 and the reset,
// and the counters say how many came after the first such answer.
func TestAPIBudget(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t, fakegithub.WithAPIBudget(3, time.Hour))
	repo, first, _ := newToolsRepo(t, s)
	start := time.Now()

	status, hdr, _ := get(t, s.APIURL+"/repos/acme/tools")
	if status != 200 || hdr.Get("X-RateLimit-Limit") != "3" || hdr.Get("X-RateLimit-Remaining") != "2" || hdr.Get("X-RateLimit-Resource") != "core" {
		t.Fatalf("first: %d %v", status, hdr)
	}
	reset, err := strconv.ParseInt(hdr.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil || time.Unix(reset, 0).Before(start.Add(time.Hour)) || time.Unix(reset, 0).After(time.Now().Add(time.Hour+time.Second)) {
		t.Fatalf("X-RateLimit-Reset %q: want the window's end, an hour from the first request", hdr.Get("X-RateLimit-Reset"))
	}
	if status, _, _ := get(t, s.APIURL+"/repos/acme/nope"); status != 404 { // a 404 counts too
		t.Fatalf("missing repo: %d", status)
	}
	// Not counted: git, the archive itself, an authenticated request.
	get(t, s.URL+"/acme/tools.git/info/refs?service=git-upload-pack")
	get(t, repo.ArchiveURL(first))
	if status, hdr, _ := get(t, s.APIURL+"/repos/acme/tools", "Authorization", "Bearer t"); status != 200 || hdr.Get("X-RateLimit-Remaining") != "" {
		t.Fatalf("authenticated: %d %v", status, hdr)
	}
	// The last one: the tarball link's redirect counts.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(s.APIURL + "/repos/acme/tools/tarball/" + first)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("tarball link: %d remaining %q", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}
	if c := s.Counts(); c.APILimited != 0 || c.APIAfterLimited != 0 {
		t.Fatalf("nothing limited yet: %+v", c)
	}
	for i := 0; i < 2; i++ {
		status, hdr, body := get(t, s.APIURL+"/repos/acme/tools/commits/main")
		if status != http.StatusForbidden || hdr.Get("X-RateLimit-Remaining") != "0" || hdr.Get("X-RateLimit-Reset") != strconv.FormatInt(reset, 10) || len(body) == 0 {
			t.Fatalf("over the budget: %d %v %s", status, hdr, body)
		}
	}
	if status, _, _ := get(t, s.URL+"/acme/tools.git/info/refs?service=git-upload-pack"); status != 200 {
		t.Fatalf("git over the budget: %d", status)
	}
	c := s.Counts()
	if c.APILimited != 2 || c.APIAfterLimited != 1 || c.API() != 5+1 {
		t.Fatalf("counts: limited %d, after the first limited %d, API %d", c.APILimited, c.APIAfterLimited, c.API())
	}
	if rc := s.RepoCounts("acme", "tools"); rc.APILimited != 2 {
		t.Fatalf("repo counts: %+v", rc)
	}
	s.ResetCounts()
	get(t, s.APIURL+"/repos/acme/tools")
	if c := s.Counts(); c.APILimited != 1 || c.APIAfterLimited != 0 {
		t.Fatalf("after ResetCounts: %+v", c)
	}
}

// A new window refills the budget; SetAPIBudget turns it off.
func TestAPIBudgetWindow(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t, fakegithub.WithAPIBudget(1, time.Second))
	newToolsRepo(t, s)
	if status, _, _ := get(t, s.APIURL+"/repos/acme/tools"); status != 200 {
		t.Fatal(status)
	}
	status, hdr, _ := get(t, s.APIURL+"/repos/acme/tools")
	if status != http.StatusForbidden {
		t.Fatalf("second in the window: %d", status)
	}
	reset, _ := strconv.ParseInt(hdr.Get("X-RateLimit-Reset"), 10, 64)
	time.Sleep(time.Until(time.Unix(reset, 0)) + 10*time.Millisecond)
	if status, _, _ := get(t, s.APIURL+"/repos/acme/tools"); status != 200 {
		t.Fatalf("after the reset: %d", status)
	}
	s.SetAPIBudget(0, 0)
	for i := 0; i < 3; i++ {
		if status, hdr, _ := get(t, s.APIURL+"/repos/acme/tools"); status != 200 || hdr.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("without a budget: %d %v", status, hdr)
		}
	}
}
