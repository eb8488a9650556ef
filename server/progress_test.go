package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// openStream opens GET /events?progress=id with headers h and returns the
// status; a stream that opened is closed again at the end of the test
// (streams nothing reports to stay in the hub for progressUnused anyway).
func (e *env) openStream(t *testing.T, id string, h hdr) reply {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/events?progress="+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range h {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		t.Cleanup(func() { cancel(); resp.Body.Close() })
		return reply{status: resp.StatusCode, header: resp.Header}
	}
	defer cancel()
	r := reply{status: resp.StatusCode, header: resp.Header, body: []byte(readAll(t, resp))}
	return r
}

// TestProgressCapPerClient: one client cannot take every progress stream,
// nor hold any number of connections following one. A browser session that
// opened its share is refused more (429, saying why), while the token
// holder and another session still get theirs; a finished stream of the
// client's own makes room.
func TestProgressCapPerClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	greedy, greedyToken := e.signIn()
	modest, modestToken := e.signIn()

	for i := range maxProgressPerClient {
		if r := e.openStream(t, fmt.Sprintf("greedy-%03d", i), e.page(greedy, greedyToken)); r.status != 200 {
			t.Fatalf("stream %d of %d: %d %s", i+1, maxProgressPerClient, r.status, r.body)
		}
	}
	over := e.openStream(t, "greedy-over", e.page(greedy, greedyToken))
	over.wantError(t, http.StatusTooManyRequests, CodeBusy)
	if msg := string(over.body); !strings.Contains(msg, fmt.Sprintf("%d progress streams", maxProgressPerClient)) || !strings.Contains(msg, ProgressHeader) {
		t.Fatalf("the refusal does not say why: %s", msg)
	}
	// A plan naming a new stream is refused the same way, before any work.
	e.do("POST", "/plugins/plan", map[string]string{"source": "/nowhere"}, func() hdr {
		h := e.page(greedy, greedyToken)
		h[ProgressHeader] = "greedy-plan"
		return h
	}()).wantError(t, http.StatusTooManyRequests, CodeBusy)
	// Reopening one of its own streams is not a new stream.
	if r := e.openStream(t, "greedy-000", e.page(greedy, greedyToken)); r.status != 200 {
		t.Fatalf("reopening an own stream: %d %s", r.status, r.body)
	}
	// Others are not affected.
	if r := e.openStream(t, "modest-1", e.page(modest, modestToken)); r.status != 200 {
		t.Fatalf("another session: %d %s", r.status, r.body)
	}
	if r := e.openStream(t, "token-holder-1", nil); r.status != 200 {
		t.Fatalf("the token holder: %d %s", r.status, r.body)
	}

	// Following one stream over and over holds a connection each time:
	// bounded too.
	for i := 1; i < maxFollowersPerClient; i++ {
		if r := e.openStream(t, "modest-1", e.page(modest, modestToken)); r.status != 200 {
			t.Fatalf("follower %d: %d %s", i+1, r.status, r.body)
		}
	}
	crowd := e.openStream(t, "modest-1", e.page(modest, modestToken))
	crowd.wantError(t, http.StatusTooManyRequests, CodeBusy)
	if !strings.Contains(string(crowd.body), fmt.Sprintf("follows %d progress streams", maxFollowersPerClient)) {
		t.Fatalf("the refusal does not say why: %s", crowd.body)
	}

	// A finished stream of its own makes room for a new one.
	h := e.page(greedy, greedyToken)
	h[ProgressHeader] = "greedy-001"
	e.do("POST", "/plugins/plan", map[string]string{"source": "relative/path"}, h).wantError(t, 400, "install.invalid_source")
	if r := e.openStream(t, "greedy-after", e.page(greedy, greedyToken)); r.status != 200 {
		t.Fatalf("after one of its streams finished: %d %s", r.status, r.body)
	}
}

// TestProgressCapOverall: the daemon's own bound holds across clients.
func TestProgressCapOverall(t *testing.T) {
	t.Parallel()
	var hub progressHub
	for i := range maxProgressStreams {
		who := principal(fmt.Sprintf("session:%d", i/maxProgressPerClient))
		if _, err := hub.get(who, fmt.Sprintf("stream-%04d", i)); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	_, err := hub.get("session:new", "one-more")
	if err == nil || err.status != http.StatusServiceUnavailable || !strings.Contains(err.msg, fmt.Sprintf("daemon already holds %d", maxProgressStreams)) {
		t.Fatalf("over the daemon's bound: %v", err)
	}
	// Streams idle past progressUnused are dropped, which makes room.
	for _, p := range hub.streams {
		p.mu.Lock()
		p.touched = time.Now().Add(-progressUnused - time.Second)
		p.mu.Unlock()
	}
	if _, err := hub.get("session:new", "one-more"); err != nil {
		t.Fatalf("after idle streams were dropped: %v", err)
	}
}
