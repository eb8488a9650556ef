package fakegithub_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/hashicorp/go-retryablehttp"

	"reasonix.io/plugind/internal/fakegithub"
)

func TestFaultStatusThenSuccess(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	s.Fault(fakegithub.RouteAPI, fakegithub.Fault{Status: http.StatusBadGateway, Times: 2})

	rc := retryablehttp.NewClient()
	rc.Logger = nil
	rc.RetryWaitMin, rc.RetryWaitMax, rc.RetryMax = time.Millisecond, 5*time.Millisecond, 4
	req, err := retryablehttp.NewRequestWithContext(testCtx(t), http.MethodGet, s.APIURL+"/repos/acme/tools", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status after retries = %d", resp.StatusCode)
	}
	if c := s.Counts(); c.APIRepo != 3 {
		t.Fatalf("APIRepo = %d, want 3 (two 502s, then success)", c.APIRepo)
	}
}

func TestFaultRetryAfter(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	s.Fault(fakegithub.RouteAPI, fakegithub.Fault{Status: http.StatusTooManyRequests, RetryAfter: "7", Times: 1})
	status, hdr, body := get(t, s.APIURL+"/repos/acme/tools")
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") != "7" || len(body) == 0 {
		t.Fatalf("got %d Retry-After %q body %q", status, hdr.Get("Retry-After"), body)
	}
	if status, hdr, _ := get(t, s.APIURL+"/repos/acme/tools"); status != http.StatusOK || hdr.Get("Retry-After") != "" {
		t.Fatalf("second request: %d", status)
	}
}

func TestFaultTruncate(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, _, head := newToolsRepo(t, s)
	url := s.URL + "/_archive/acme/tools/" + head + ".tar.gz"
	_, _, full := get(t, url)

	s.Fault(fakegithub.RouteArchive, fakegithub.Fault{Truncate: true, Times: 1})
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read truncated body: err = %v, want unexpected EOF", err)
	}
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(full)) || len(got) != len(full)/2 {
		t.Fatalf("status %d, Content-Length %d, got %d bytes; want 200, %d, %d", resp.StatusCode, resp.ContentLength, len(got), len(full), len(full)/2)
	}
	if _, _, again := get(t, url); len(again) != len(full) {
		t.Fatalf("after the fault: %d bytes, want %d", len(again), len(full))
	}
}

func TestFaultStallEndsWithClient(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	s.Fault(fakegithub.RouteAPI, fakegithub.Fault{Stall: time.Hour})

	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.APIURL+"/repos/acme/tools", nil)
	_, err := http.DefaultClient.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled request: err = %v, want deadline exceeded", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.InFlight() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("stalled handler still running after the client went away")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFaultStallThenAnswer(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	const stall = 150 * time.Millisecond
	s.Fault(fakegithub.RouteAPI, fakegithub.Fault{Stall: stall, Times: 1})
	start := time.Now()
	if status, _, _ := get(t, s.APIURL+"/repos/acme/tools"); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if d := time.Since(start); d < stall {
		t.Fatalf("answered after %v, want at least %v", d, stall)
	}
}

func TestFaultGitAndPathPrefix(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	other := s.CreateRepo("acme", "other")
	other.Commit("main", map[string]string{"a": "b"})

	s.Fault(fakegithub.RouteGit, fakegithub.Fault{Status: http.StatusServiceUnavailable, Times: 1})
	clone := func(name string) error {
		_, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: s.URL + "/acme/" + name})
		return err
	}
	if err := clone("tools"); err == nil {
		t.Fatal("clone succeeded through a 503")
	}
	if err := clone("tools"); err != nil {
		t.Fatalf("clone after the fault was used up: %v", err)
	}

	s.Fault(fakegithub.PathPrefix("/acme/other"), fakegithub.Fault{Status: http.StatusInternalServerError})
	if err := clone("other"); err == nil {
		t.Fatal("clone of faulted repo succeeded")
	}
	if err := clone("tools"); err != nil {
		t.Fatalf("path-prefix fault leaked to another repo: %v", err)
	}
	if status, _, _ := get(t, s.APIURL+"/repos/acme/other"); status != http.StatusOK {
		t.Fatalf("path-prefix fault leaked to the API: %d", status)
	}
	s.ClearFaults()
	if err := clone("other"); err != nil {
		t.Fatalf("clone after ClearFaults: %v", err)
	}
}

func TestFaultAllRoutes(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, _, head := newToolsRepo(t, s)
	s.Fault(fakegithub.RouteAll, fakegithub.Fault{Status: http.StatusTeapot, Times: 3})
	for _, u := range []string{
		s.APIURL + "/repos/acme/tools",
		s.URL + "/acme/tools.git/info/refs?service=git-upload-pack",
		s.URL + "/_archive/acme/tools/" + head + ".tar.gz",
	} {
		if status, _, _ := get(t, u); status != http.StatusTeapot {
			t.Fatalf("%s: %d, want 418", u, status)
		}
	}
	if status, _, _ := get(t, s.APIURL+"/repos/acme/tools"); status != http.StatusOK {
		t.Fatalf("after Times ran out: %d", status)
	}
}
