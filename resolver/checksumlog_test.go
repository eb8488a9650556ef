package resolver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/fakelog"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// withLog is e's resolver checking against l, its log state in home (a
// fresh Sources is a fresh process: nothing in memory carries over).
func (e *env) withLog(l *fakelog.Log, home string) *Sources {
	e.t.Helper()
	cfg, err := host.ParseChecksumLog(l.Env())
	if err != nil {
		e.t.Fatal(err)
	}
	cl, err := host.NewChecksumLog(host.ChecksumLogConfig{
		Log: cfg, CacheDir: filepath.Join(home, "cache", "checksumlog"), StateDir: filepath.Join(home, "checksumlog"),
		Net: host.NetConfig{Timeout: 5 * time.Second, Retries: 1},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	c := e.res.cfg
	c.ChecksumLog = cl
	return New(c)
}

func resolveWith(t *testing.T, s *Sources, src string, mod ...func(*Request)) (*Fetched, error) {
	t.Helper()
	parsed, err := source.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Source: parsed}
	for _, m := range mod {
		m(&req)
	}
	return s.Resolve(context.Background(), req)
}

// logMarket is a marketplace of two entries (one relative, one in another
// repository) and a plugin folder, all known to dirs.
func logMarket(e *env) (market string, tools *fakegithub.Repo, toolsSHA string) {
	tools = e.gh.CreateRepo("acme", "tools")
	toolsSHA = tools.Commit("main", prefixed("plugins/fmt", pluginTree("fmt")))
	m := e.gh.CreateRepo("acme", "market")
	m.Commit("main", merge(prefixed("plugins/rel", pluginTree("rel")), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[` +
			`{"name":"rel","source":"./plugins/rel"},` +
			`{"name":"fmt","source":{"source":"github","repo":"acme/tools","sha":"` + toolsSHA + `","path":"plugins/fmt"}}]}`,
	}))
	return "https://github.com/acme/market", tools, toolsSHA
}

func TestChecksumLogMatchAndWarmReplan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market, _, toolsSHA := logMarket(e)
	l := fakelog.New(t, "log.test", fakelog.FromFakeGitHub(e.gh))
	home := t.TempDir()
	s := e.withLog(l, home)
	f, err := resolveWith(t, s, market)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Candidates) != 2 || f.Candidates[0].Err != nil || f.Candidates[1].Err != nil {
		t.Fatalf("candidates: %+v", f.Candidates)
	}
	if n := l.Lookups(); n != 2 {
		t.Errorf("cold plan: %d lookups, want one per entry (2)", n)
	}
	if _, err := os.Stat(filepath.Join(home, "checksumlog", "log.test", "latest")); err != nil {
		t.Errorf("the latest tree head is not remembered: %v", err)
	}
	single, err := resolveWith(t, s, "https://github.com/acme/tools/tree/"+toolsSHA+"/plugins/fmt")
	if err != nil || single.Candidates[0].Digest != f.Candidates[1].Digest {
		t.Fatalf("the plugin alone: %+v %v", single, err)
	}
	// A warm re-plan, in this process or the next, asks the log nothing.
	for i, s := range []*Sources{s, e.withLog(l, home)} {
		l.Reset()
		if _, err := resolveWith(t, s, market); err != nil {
			t.Fatal(err)
		}
		if n := l.Requests(); n != 0 {
			t.Errorf("warm re-plan %d: %d requests to the log, want 0", i, n)
		}
	}
	// Offline, the verified records answer.
	l.Down(true)
	if _, err := resolveWith(t, e.withLog(l, home), market, offline); err != nil {
		t.Fatalf("offline: %v", err)
	}
}

func TestChecksumLogMismatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market, _, toolsSHA := logMarket(e)
	l := fakelog.New(t, "log.test", fakelog.FromFakeGitHub(e.gh))
	forged := "sha256:" + strings.Repeat("e", 64)
	l.Alter("github.com/acme/tools", "plugins/fmt", toolsSHA, forged)
	for _, src := range []string{market, "https://github.com/acme/tools/tree/" + toolsSHA + "/plugins/fmt"} {
		e.reset()
		_, err := resolveWith(t, e.withLog(l, t.TempDir()), src)
		// The disputed copy was set aside: every plan fetches again
		// (the marketplace's plan stored it; the plugin's fetches it).
		if n := e.content(); n == 0 {
			t.Errorf("%s: the disputed snapshot was planned from the store again", src)
		}
		mustCode(t, err, plugind.CodeDigestMismatch, host.ErrLogSecurity, "SECURITY ERROR")
		msg := err.Error()
		for _, want := range []string{"checksum log: " + forged, "fetched:      sha256:", "github.com/acme/tools/plugins/fmt@" + toolsSHA, "record #", "log.test", "signed tree of", "may be compromised", "set aside"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the refusal does not say %q:\n%s", src, want, msg)
			}
		}
	}
}

// A log that shows one home two histories is caught, across runs: the
// tree head the first run saw is remembered.
func TestChecksumLogForkAcrossRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	_, tools, toolsSHA := logMarket(e)
	other := tools.Commit("main", prefixed("plugins/lint", pluginTree("lint")))
	a := fakelog.New(t, "log.test", fakelog.FromFakeGitHub(e.gh))
	b := fakelog.NewWithKey(t, a.Signer, a.Verifier, fakelog.FromFakeGitHub(e.gh))
	home := t.TempDir()
	if _, err := resolveWith(t, e.withLog(a, home), "https://github.com/acme/tools/tree/"+toolsSHA+"/plugins/fmt"); err != nil {
		t.Fatal(err)
	}
	// b's history starts with another record than a's.
	if _, err := resolveWith(t, e.withLog(b, t.TempDir()), "https://github.com/acme/tools/tree/"+other+"/plugins/lint"); err != nil {
		t.Fatal(err)
	}
	// The first run's record is cached (nothing is asked for it): a record
	// this home has not verified yet brings b's tree head.
	_, err := resolveWith(t, e.withLog(b, home), "https://github.com/acme/tools/tree/"+other+"/plugins/lint")
	mustCode(t, err, plugind.CodeDigestMismatch, host.ErrLogSecurity, "two tree heads that are not one history")
	for _, want := range []string{"old database:", "new database:", "proof of misbehavior", "log.test"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the fork refusal does not show %q:\n%s", want, err)
		}
	}
}

func TestChecksumLogOfflineAndDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market, _, toolsSHA := logMarket(e)
	plugin := "https://github.com/acme/tools/tree/" + toolsSHA + "/plugins/fmt"
	l := fakelog.New(t, "log.test", fakelog.FromFakeGitHub(e.gh))
	// Fetched without the log: the content is in the store, the record
	// was never verified.
	if _, err := e.resolve(market); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	_, err := resolveWith(t, e.withLog(l, home), plugin, offline)
	mustCode(t, err, plugind.CodeOfflineMiss, host.ErrOffline, "checksum log's record of github.com/acme/tools/plugins/fmt@"+toolsSHA+" is not cached")
	f, err := resolveWith(t, e.withLog(l, home), market, offline)
	if err != nil || len(f.Candidates) != 2 || plugind.CodeOf(f.Candidates[1].Err) != plugind.CodeOfflineMiss {
		t.Fatalf("offline marketplace: each entry misses on its own: %+v %v", f, err)
	}
	if n := l.Requests(); n != 0 {
		t.Errorf("offline: %d requests to the log", n)
	}
	// A log that is down fails the plan closed, naming it.
	l.Down(true)
	for _, src := range []string{plugin, market} {
		_, err = resolveWith(t, e.withLog(l, home), src)
		mustCode(t, err, plugind.CodeSourceUnreadable, host.ErrLogUnavailable, l.URL)
	}
	l.Down(false)
	if _, err := resolveWith(t, e.withLog(l, home), market); err != nil {
		t.Fatalf("the log is back: %v", err)
	}
}
