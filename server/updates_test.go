package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
)

// checkFixture is a daemon's home with one plugin installed from a
// marketplace on the fake; moveOn moves the marketplace to a version that
// adds a hook.
type checkFixture struct {
	e  *env
	gh *fakegithub.Server
	mk *fakegithub.Repo
}

func newCheckFixture(t *testing.T) *checkFixture {
	t.Helper()
	gh := fakegithub.New(t)
	mk := gh.CreateRepo("acme", "market")
	mk.Commit("main", map[string]string{
		".claude-plugin/marketplace.json":  `{"name":"acme","owner":{"name":"acme"},"plugins":[{"name":"tools","source":"./tools"}]}`,
		"tools/.claude-plugin/plugin.json": `{"name":"tools","version":"1.0.0"}`,
		"tools/skills/s/SKILL.md":          "---\ndescription: s\n---\nbody\n",
		"tools/commands/wave.md":           "---\ndescription: Wave\n---\nWave\n",
	})
	e := newEnv(t, envOpts{gh: gh})
	if _, err := e.in.Install(context.Background(), installer.Request{Source: mustSource("https://github.com/acme/market")}, installer.Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	return &checkFixture{e: e, gh: gh, mk: mk}
}

func (fx *checkFixture) moveOn() string {
	return fx.mk.Commit("main", map[string]string{
		"tools/.claude-plugin/plugin.json": `{"name":"tools","version":"2.0.0"}`,
		"tools/hooks/hooks.json":           `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo hi"}]}]}}`,
	})
}

// serve runs a daemon over the fixture's installer with cfg's update
// checks until the returned stop is called; stop waits for Serve.
func (fx *checkFixture) serve(t *testing.T, every time.Duration, offline bool) (base string, stop func()) {
	t.Helper()
	srv, err := New(Config{Installer: fx.e.in, Token: testToken, Log: NewLogger(fx.e.log, -4), CheckUpdates: every, FirstCheck: time.Millisecond, Offline: offline})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	var once bool
	return "http://" + ln.Addr().String(), func() {
		if once {
			return
		}
		once = true
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not return within 5s of its context's end")
		}
	}
}

type updatesAnswer struct {
	installer.UpdateCheck
	Every string    `json:"every"`
	Next  time.Time `json:"next"`
}

func getUpdates(t *testing.T, base string) updatesAnswer {
	t.Helper()
	r := doURL(t, base, "GET", "/updates", nil, nil)
	if r.status != 200 {
		t.Fatalf("GET /updates: %d %s", r.status, r.body)
	}
	var u updatesAnswer
	if err := json.Unmarshal(r.body, &u); err != nil {
		t.Fatal(err)
	}
	return u
}

// waitUpdates polls GET /updates until ok says it is what the test waits for.
func waitUpdates(t *testing.T, base string, ok func(updatesAnswer) bool) updatesAnswer {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		u := getUpdates(t, base)
		if ok(u) {
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /updates never got there: %+v", u)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The background check fires on its own, finds the moved marketplace with
// its diff and risk raise, applies nothing, keeps checking with one 304 a
// time while nothing moves, survives a restart, and asks for the token.
func TestBackgroundUpdateCheck(t *testing.T) {
	t.Parallel()
	fx := newCheckFixture(t)
	to := fx.moveOn()
	before := fx.e.registryBytes()
	base, stop := fx.serve(t, 300*time.Millisecond, false)
	defer stop()

	if r := doURL(t, base, "GET", "/updates", nil, hdr{"Authorization": ""}); r.status != 401 {
		t.Fatalf("GET /updates without the token: %d %s", r.status, r.body)
	}
	u := waitUpdates(t, base, func(u updatesAnswer) bool { return u.Status == installer.CheckOK })
	if len(u.Updates) != 1 || u.Updates[0].Name != "tools" || u.Updates[0].ToCommit != to || u.Updates[0].FromVersion != "1.0.0" || u.Updates[0].ToVersion != "2.0.0" {
		t.Fatalf("updates = %+v", u.Updates)
	}
	if n := u.Updates[0]; !n.RiskRaised || n.Diff == nil || len(n.Diff.Added) == 0 {
		t.Fatalf("notice lacks its risk raise or diff: %+v", n)
	}
	if u.Every != "300ms" || u.Next.IsZero() || u.LastSuccessAt.IsZero() {
		t.Fatalf("schedule = every %q next %v last success %v", u.Every, u.Next, u.LastSuccessAt)
	}
	if !bytes.Equal(fx.e.registryBytes(), before) {
		t.Fatal("the background check applied something")
	}
	// Later checks of the unchanged marketplace cost one 304 each.
	fx.gh.ResetCounts()
	first := u.CheckedAt
	waitUpdates(t, base, func(u updatesAnswer) bool { return u.CheckedAt.After(first) })
	if c := fx.gh.Counts(); c.Content() != 0 || c.APICommits304 < 1 || c.Total != c.APICommits304 {
		t.Fatalf("unchanged checks cost %+v, want 304s only", c)
	}
	stop()

	// After a restart with checks off, the stored check is still there.
	base2, stop2 := fx.serve(t, 0, false)
	defer stop2()
	again := getUpdates(t, base2)
	if again.Status != installer.CheckOK || len(again.Updates) != 1 || again.Every != "off" || !again.Next.IsZero() {
		t.Fatalf("after a restart: %+v", again)
	}
}

// Offline, the check is skipped and says so, keeping the last success.
func TestBackgroundUpdateCheckOffline(t *testing.T) {
	t.Parallel()
	fx := newCheckFixture(t)
	fx.moveOn()
	ok, err := fx.e.in.CheckUpdates(context.Background(), false)
	if err != nil || ok.Status != installer.CheckOK {
		t.Fatalf("first check: %+v %v", ok, err)
	}
	fx.gh.ResetCounts()
	// The stored check is recent: a restarted daemon waits out its
	// interval, so the interval here is short.
	base, stop := fx.serve(t, 200*time.Millisecond, true)
	defer stop()
	u := waitUpdates(t, base, func(u updatesAnswer) bool { return u.Status == installer.CheckSkippedOffline })
	if !u.LastSuccessAt.Equal(ok.LastSuccessAt) || len(u.Updates) != 1 || !u.CheckedAt.After(ok.CheckedAt) {
		t.Fatalf("offline: %+v, want the last success %v kept", u, ok.LastSuccessAt)
	}
	if c := fx.gh.Counts(); c.Total != 0 {
		t.Fatalf("an offline check made requests: %+v", c)
	}
}

// A shutdown cancels a check in flight at once, and stores nothing of it.
func TestBackgroundUpdateCheckCancelledOnShutdown(t *testing.T) {
	t.Parallel()
	fx := newCheckFixture(t)
	fx.gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Stall: time.Minute})
	base, stop := fx.serve(t, time.Hour, false)
	deadline := time.Now().Add(10 * time.Second)
	for fx.gh.InFlight() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first check never asked the fake")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if u := getUpdates(t, base); u.Status != installer.CheckNever {
		t.Fatalf("during the first check: %+v", u)
	}
	began := time.Now()
	stop()
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("shutdown waited %v for the check", d)
	}
	c, err := fx.e.in.LastUpdateCheck(context.Background())
	if err != nil || c.Status != installer.CheckNever {
		t.Fatalf("a cancelled check stored %+v (%v)", c, err)
	}
}
