package installer

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
)

// marketHome is a home with one plugin (rel-plug) installed from a
// marketplace (m) on the fake that holds it; moveOn moves the marketplace
// on with a riskier version.
type marketHome struct {
	env  *remoteEnv
	gh   *fakegithub.Server
	mk   *fakegithub.Repo
	from string // the installed commit
}

func newMarketHome(t *testing.T) *marketHome {
	t.Helper()
	gh := fakegithub.New(t)
	mk := gh.CreateRepo("acme", "market")
	doc := marketplaceJSON(t, "m", entry("rel-plug", "./plugins/rel"))
	first := mk.Commit("main", merge(under("plugins/rel", pluginFiles("rel-plug", "v1")), map[string]string{".claude-plugin/marketplace.json": doc}))
	env := newRemoteEnv(t, gh, remoteOpts{})
	if _, err := env.install(Request{Source: mustSource("https://github.com/acme/market")}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	return &marketHome{env: env, gh: gh, mk: mk, from: first}
}

// moveOn commits a version 2.0.0 of the plugin that adds a hook (a risk
// raise) and returns the new commit.
func (fx *marketHome) moveOn() string {
	files := under("plugins/rel", pluginFiles("rel-plug", "v2"))
	files["plugins/rel/.claude-plugin/plugin.json"] = `{"name":"rel-plug","version":"2.0.0"}`
	files["plugins/rel/hooks/hooks.json"] = `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"scripts/run.sh"}]}]}}`
	return fx.mk.Commit("main", files)
}

func (fx *marketHome) check(t *testing.T, offline bool) *UpdateCheck {
	t.Helper()
	c, err := fx.env.in.CheckUpdates(context.Background(), offline)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	return c
}

// An unchanged marketplace costs one conditional request (a 304) and no
// content fetch, finds nothing to move, and writes nothing but the cache.
func TestCheckUpdatesUnchangedCostsOneConditionalRequest(t *testing.T) {
	t.Parallel()
	fx := newMarketHome(t)
	before := fx.env.registryBytes()
	// A check is a read: it runs while another process holds the home's
	// lock (an install in progress).
	unlock, err := fx.env.in.LockHome(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	fx.gh.ResetCounts()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := fx.env.in.CheckUpdates(ctx, false)
	if err != nil {
		t.Fatalf("check with the home locked: %v", err)
	}
	if got := fx.gh.Counts(); got.Total != 1 || got.APICommits304 != 1 || got.Content() != 0 {
		t.Fatalf("an unchanged check made %+v, want one 304 and nothing else", got)
	}
	if c.Status != CheckOK || len(c.Updates) != 0 || c.UpToDate != 1 || len(c.CouldNotCheck) != 0 || c.LastSuccessAt.IsZero() {
		t.Fatalf("unchanged check = %+v", c)
	}
	if !bytes.Equal(fx.env.registryBytes(), before) {
		t.Fatal("a check rewrote the registry")
	}
}

// A moved marketplace is a notice with its commits, versions, diff and
// risk raise; nothing is applied; the stored check reads back the same,
// and drops the notice once the update has been applied.
func TestCheckUpdatesMovedMarketplaceIsANotice(t *testing.T) {
	t.Parallel()
	fx := newMarketHome(t)
	to := fx.moveOn()
	before := fx.env.registryBytes()
	c := fx.check(t, false)
	if c.Status != CheckOK || len(c.Updates) != 1 {
		t.Fatalf("check = %+v, want one update", c)
	}
	n := c.Updates[0]
	if n.Name != "rel-plug" || n.MarketplaceName != "m" || n.FromCommit != fx.from || n.ToCommit != to || n.FromVersion != "1.0.0" || n.ToVersion != "2.0.0" {
		t.Fatalf("notice = %+v, want rel-plug %s → %s, 1.0.0 → 2.0.0", n, fx.from, to)
	}
	if !n.RiskRaised || n.Diff == nil || !containsFragment(n.Diff.Summary, "adds hook PreToolUse Bash") {
		t.Fatalf("notice risk %s (was %s, raised %v), diff %+v: want the hook and a raise", n.Risk, n.PreviousRisk, n.RiskRaised, n.Diff)
	}
	if !bytes.Equal(fx.env.registryBytes(), before) {
		t.Fatal("a check applied something")
	}
	stored, err := fx.env.in.LastUpdateCheck(context.Background())
	if err != nil || len(stored.Updates) != 1 || stored.Updates[0].ToCommit != to || !stored.CheckedAt.Equal(c.CheckedAt) {
		t.Fatalf("stored check = %+v, %v", stored, err)
	}
	if _, err := fx.env.update("rel-plug", false, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	if after, err := fx.env.in.LastUpdateCheck(context.Background()); err != nil || len(after.Updates) != 0 {
		t.Fatalf("after the update was applied, the check still says %+v (%v)", after, err)
	}
}

// Offline, or with no source answering, the check is skipped: the last
// success's time and notices stand; a source that failed otherwise is
// "could not check", never up to date.
func TestCheckUpdatesOfflineKeepsTheLastSuccess(t *testing.T) {
	t.Parallel()
	fx := newMarketHome(t)
	to := fx.moveOn()
	ok := fx.check(t, false)
	fx.env.in.Now = func() time.Time { return ok.CheckedAt.Add(time.Hour) }
	fx.gh.ResetCounts()
	off := fx.check(t, true)
	if got := fx.gh.Counts(); got.Total != 0 {
		t.Fatalf("an offline check made requests: %+v", got)
	}
	if off.Status != CheckSkippedOffline || !off.LastSuccessAt.Equal(ok.LastSuccessAt) || !off.CheckedAt.After(ok.CheckedAt) || len(off.Updates) != 1 || off.Updates[0].ToCommit != to {
		t.Fatalf("offline check = %+v, want skipped with the last success's notices", off)
	}

	fx.gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Status: 503})
	down := fx.check(t, false)
	if down.Status != CheckSkippedOffline || !down.LastSuccessAt.Equal(ok.LastSuccessAt) || len(down.Updates) != 1 {
		t.Fatalf("check with every source down = %+v, want skipped-offline keeping the last success", down)
	}
	if len(down.CouldNotCheck) != 1 || down.CouldNotCheck[0].Name != "rel-plug" || down.CouldNotCheck[0].Reason != host.UncheckedNetwork || down.Current() {
		t.Fatalf("with every source down, could not check = %+v", down.CouldNotCheck)
	}
	stored, err := fx.env.in.LastUpdateCheck(context.Background())
	if err != nil || stored.Status != CheckSkippedOffline || !stored.LastSuccessAt.Equal(ok.LastSuccessAt) {
		t.Fatalf("stored = %+v, %v", stored, err)
	}
}

// Without any check, the stored one says never.
func TestLastUpdateCheckNever(t *testing.T) {
	t.Parallel()
	fx := newMarketHome(t)
	c, err := fx.env.in.LastUpdateCheck(context.Background())
	if err != nil || c.Status != CheckNever || c.Updates == nil || c.CouldNotCheck == nil {
		t.Fatalf("never checked = %+v, %v", c, err)
	}
}

// One marketplace down and another up: the check is a success, and the
// plugin of the one down is "could not check", never up to date, so the
// check is not a full answer.
func TestCheckUpdatesOneSourceDownIsCouldNotCheck(t *testing.T) {
	t.Parallel()
	fx := newMarketHome(t)
	other := fx.gh.CreateRepo("acme", "other")
	other.Commit("main", merge(under("plugins/o", pluginFiles("other-plug", "v1")), map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "o", entry("other-plug", "./plugins/o"))}))
	if _, err := fx.env.install(Request{Source: mustSource("https://github.com/acme/other")}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	to := fx.moveOn()
	fx.gh.Fault(fakegithub.PathPrefix("/api/v3/repos/acme/other"), fakegithub.Fault{Status: 503})
	fx.gh.Fault(fakegithub.PathPrefix("/acme/other"), fakegithub.Fault{Status: 503})
	c := fx.check(t, false)
	if c.Status != CheckOK || len(c.Updates) != 1 || c.Updates[0].ToCommit != to || c.UpToDate != 0 {
		t.Fatalf("check = %+v, want ok with rel-plug's move", c)
	}
	if len(c.CouldNotCheck) != 1 || c.CouldNotCheck[0].Name != "other-plug" || c.Current() {
		t.Fatalf("could not check = %+v (current %v), want other-plug", c.CouldNotCheck, c.Current())
	}
}

// A check that cannot plan at all (here: an unreadable registry) is
// failed, says why, and keeps the last success's time and notices.
func TestCheckUpdatesFailedKeepsTheLastSuccess(t *testing.T) {
	t.Parallel()
	fx := newMarketHome(t)
	fx.moveOn()
	ok := fx.check(t, false)
	if err := os.WriteFile(fx.env.home.RegistryPath(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := fx.check(t, false)
	if c.Status != CheckFailed || c.Error == "" || !c.LastSuccessAt.Equal(ok.LastSuccessAt) || len(c.Updates) != 1 || c.Current() {
		t.Fatalf("failed check = %+v", c)
	}
}
