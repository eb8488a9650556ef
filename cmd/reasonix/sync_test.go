package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/lockfile"
)

// lockedEntry is what two machines synced by a lock must agree on.
type lockedEntry struct {
	Name, Source, Commit, ContentDigest string
	Enabled                             bool
}

func lockedEntries(t *testing.T, home string) []lockedEntry {
	t.Helper()
	reg, err := installer.LoadRegistry(filepath.Join(home, "plugin-packages.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []lockedEntry
	for _, e := range reg.Plugins {
		out = append(out, lockedEntry{e.Name, e.Source.String(), e.Commit, e.ContentDigest, e.Enabled})
	}
	return out
}

// syncFixture is two marketplaces on the fake GitHub: acme (a plugin in
// its own repository, one whose entry supplies its manifest, strict:
// false, and one in another repository pinned by sha) and beta.
type syncFixture struct {
	gh         *fakegithub.Server
	acme, beta *fakegithub.Repo
	ext        *fakegithub.Repo
	extCommit  string
	home       string // machine A, with both installed and the lock written
	lock       string // machine A's lock
	t          *testing.T
}

func claudePlugin(dir, name, text string) map[string]string {
	return map[string]string{
		dir + ".claude-plugin/plugin.json":   `{"name":"` + name + `","version":"1.0.0"}`,
		dir + "skills/" + name + "/SKILL.md": "---\ndescription: " + text + "\n---\n" + text + "\n",
	}
}

func newSyncFixture(t *testing.T) *syncFixture {
	t.Helper()
	gh := fakegithub.New(t)
	f := &syncFixture{gh: gh, t: t, acme: gh.CreateRepo("acme", "market"), beta: gh.CreateRepo("beta", "tools"), ext: gh.CreateRepo("acme", "ext")}
	ext := claudePlugin("", "ext", "external one")
	ext[".claude-plugin/plugin.json"] = `{"name":"ext","version":"1.0.0","userConfig":{
		"width":{"type":"number","title":"Width","description":"Line width","default":80},
		"token":{"type":"string","title":"Token","description":"A service token","sensitive":true}}}`
	f.extCommit = f.ext.Commit("main", ext)
	f.acme.Commit("main", f.acmeFiles("formats code"))
	f.beta.Commit("main", merge(map[string]string{
		".claude-plugin/marketplace.json": `{"name":"beta","owner":{"name":"b"},"plugins":[{"name":"docs","source":"./docs"}]}`,
	}, claudePlugin("docs/", "docs", "writes docs")))
	f.home = t.TempDir()
	for _, src := range []string{"https://github.com/acme/market", "https://github.com/beta/tools"} {
		args := []string{"plugin", "install", src, "--yes"}
		if strings.Contains(src, "acme") {
			args = append(args, "--config", "ext.width=100", "--config", "ext.token="+syncSecret)
		}
		if r := runBinary(t, f.home, gh.Env(), args...); r.code != 0 {
			t.Fatalf("install %s on A: exit %d\n%s\n%s", src, r.code, r.stdout, r.stderr)
		}
	}
	if r := runBinary(t, f.home, gh.Env(), "plugin", "disable", "docs"); r.code != 0 {
		t.Fatalf("disable docs: %s", r.stderr)
	}
	f.lock = filepath.Join(t.TempDir(), "reasonix.lock.json")
	if r := runBinary(t, f.home, gh.Env(), "lock", "-o", f.lock); r.code != 0 {
		t.Fatalf("lock: exit %d %s", r.code, r.stderr)
	}
	return f
}

// syncSecret is a sensitive option value on machine A: never in a lock.
const syncSecret = "s3cr3t-token-value"

func (f *syncFixture) acmeFiles(fmtText string) map[string]string {
	return merge(map[string]string{
		".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"a"},"plugins":[
			{"name":"fmt","source":"./plugins/fmt"},
			{"name":"lint","source":"./plugins/lint","strict":false,"description":"lints","skills":["./skills/lint"]},
			{"name":"ext","source":{"source":"github","repo":"acme/ext","sha":"` + f.extCommit + `"}}]}`,
		"plugins/lint/skills/lint/SKILL.md": "---\ndescription: lints\n---\nlint\n",
	}, claudePlugin("plugins/fmt/", "fmt", fmtText))
}

func (f *syncFixture) sync(home string, args ...string) result {
	f.t.Helper()
	return runBinary(f.t, home, f.gh.Env(), append([]string{"sync"}, args...)...)
}

func readLock(t *testing.T, path string) *lockfile.Lock {
	t.Helper()
	l, err := lockfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func writeLock(t *testing.T, l *lockfile.Lock) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edited.lock.json")
	if err := l.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSyncTwoMachines: machine A installs from two marketplaces and
// locks; an empty machine B syncs and ends with the same plugins, commits,
// digests and enabled states, and knows both marketplaces; after the
// marketplace moves on, a fresh machine still gets the locked commits
// (--frozen); B's sync again is up to date.
func TestSyncTwoMachines(t *testing.T) {
	f := newSyncFixture(t)
	lock := readLock(t, f.lock)
	if len(lock.Marketplaces) != 2 || len(lock.Plugins) != 4 {
		t.Fatalf("lock: %d marketplaces, %d plugins, want 2 and 4:\n%+v", len(lock.Marketplaces), len(lock.Plugins), lock)
	}
	want := lockedEntries(t, f.home)
	raw, err := os.ReadFile(f.lock)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(syncSecret)) || !bytes.Contains(raw, []byte(`"width": 100`)) {
		t.Fatalf("the lock holds the sensitive value, or not the other one:\n%s", raw)
	}

	b := t.TempDir()
	if r := f.sync(b, f.lock, "--yes"); r.code != 0 {
		t.Fatalf("sync B: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := lockedEntries(t, b); !equalEntries(got, want) {
		t.Fatalf("B after sync:\n%+v\nwant A's:\n%+v", got, want)
	}
	regB, _ := installer.LoadRegistry(filepath.Join(b, "plugin-packages.json"))
	known, err := installer.LoadMarketplaces(filepath.Join(b, "marketplaces.json"))
	if err != nil || len(known.Marketplaces) != 2 {
		t.Fatalf("B knows %+v (%v), want acme and beta", known, err)
	}
	// The locked option value, and no sensitive one (B never had it).
	if e, _ := regB.Find("ext"); e == nil || e.Config["width"].Text() != "100" || e.ConfigFile != "" {
		t.Fatalf("ext on B: %+v, want width 100 and no config/ file", e)
	}
	// strict:false: the entry's manifest is recorded as on A.
	regA, _ := installer.LoadRegistry(filepath.Join(f.home, "plugin-packages.json"))
	la, _ := regA.Find("lint")
	lb, _ := regB.Find("lint")
	ja, _ := json.Marshal(la.EntryManifest)
	jb, _ := json.Marshal(lb.EntryManifest)
	if la.EntryManifest == nil || !bytes.Equal(ja, jb) {
		t.Fatalf("lint's entry manifest: A %s, B %s", ja, jb)
	}

	// The marketplace moves on: the lock still installs what it pins.
	moved := f.acme.Commit("main", f.acmeFiles("formats code, version two"))
	c := t.TempDir()
	r := f.sync(c, f.lock, "--yes", "--frozen")
	if r.code != 0 {
		t.Fatalf("sync C --frozen: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := lockedEntries(t, c); !equalEntries(got, want) {
		t.Fatalf("C after the marketplace moved to %s:\n%+v\nwant the locked:\n%+v", moved, got, want)
	}
	again := f.sync(b, f.lock, "--dry-run")
	if again.code != 0 || again.json(t)["status"] != "up-to-date" {
		t.Fatalf("B synced again: exit %d, %s", again.code, again.stdout)
	}
	// B forgets beta (its plugin unlinked): sync knows it again and links
	// docs to it, copying nothing.
	if r := runBinary(t, b, f.gh.Env(), "marketplace", "remove", "beta", "--force"); r.code != 0 {
		t.Fatalf("marketplace remove beta: %s", r.stderr)
	}
	if r := f.sync(b, f.lock, "--yes"); r.code != 0 || r.json(t)["status"] != "applied" {
		t.Fatalf("sync after forgetting beta: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	regB, _ = installer.LoadRegistry(filepath.Join(b, "plugin-packages.json"))
	known, _ = installer.LoadMarketplaces(filepath.Join(b, "marketplaces.json"))
	if d, _ := regB.Find("docs"); d == nil || d.MarketplaceName != "beta" || len(known.Marketplaces) != 2 {
		t.Fatalf("after sync: docs %+v, known %+v", d, known.Marketplaces)
	}

	// B drifts: fmt updated to the marketplace's new commit; sync moves it
	// back to the locked commit, as a move with what it moves from.
	if r := runBinary(t, b, f.gh.Env(), "plugin", "update", "fmt", "--yes"); r.code != 0 {
		t.Fatalf("update fmt on B: %s", r.stderr)
	}
	plan := f.sync(b, f.lock, "--dry-run").json(t)
	fmtAction := actionNamed(t, plan, "fmt")
	if fmtAction["action"] != "replace" || fmtAction["previous"] == nil || fmtAction["diff"] == nil {
		t.Fatalf("fmt drifted on B: sync plans %v, want a replace with previous and diff", fmtAction)
	}
	id := plan["planId"].(string)
	if r := f.sync(b, f.lock, "--yes", "--plan-id", id); r.code != 0 {
		t.Fatalf("sync B back: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if got := lockedEntries(t, b); !equalEntries(got, want) {
		t.Fatalf("B after moving back:\n%+v\nwant:\n%+v", got, want)
	}
}

func equalEntries(a, b []lockedEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func actionNamed(t *testing.T, resp map[string]any, name string) map[string]any {
	t.Helper()
	for _, a := range resp["actions"].([]any) {
		if m := a.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no action %s in %v", name, resp)
	return nil
}

// TestSyncRefusals: a tampered digest refuses that plugin with
// install.digest_mismatch naming both digests, and B's registry stays
// byte-identical; a lock of a newer format or with a name twice is
// refused before anything, with nothing written.
func TestSyncRefusals(t *testing.T) {
	f := newSyncFixture(t)
	b := t.TempDir()
	if r := f.sync(b, f.lock, "--yes"); r.code != 0 {
		t.Fatalf("sync B: %s", r.stderr)
	}
	before := registryBytes(t, b)

	tampered := readLock(t, f.lock)
	real := tampered.Plugins[0].ContentDigest
	fake := "sha256:" + strings.Repeat("0", 64)
	tampered.Plugins[0].ContentDigest = fake
	path := writeLock(t, tampered)
	r := f.sync(b, path, "--yes")
	if r.code != 1 {
		t.Fatalf("tampered lock: exit %d, want 1\n%s", r.code, r.stdout)
	}
	a := actionNamed(t, r.json(t), tampered.Plugins[0].Name)
	msg, _ := a["error"].(string)
	if a["errorCode"] != "install.digest_mismatch" || !strings.Contains(msg, real) || !strings.Contains(msg, fake) {
		t.Fatalf("tampered plugin: %v, want install.digest_mismatch naming %s and %s", a, real, fake)
	}
	if r.json(t)["errorCode"] != "install.digest_mismatch" {
		t.Fatalf("response error code %v, want install.digest_mismatch", r.json(t)["errorCode"])
	}
	if !bytes.Equal(registryBytes(t, b), before) {
		t.Fatal("the registry changed after a refused sync")
	}
	// On an empty machine, nothing of the tampered plugin is installed.
	e := t.TempDir()
	if r := f.sync(e, path, "--yes"); r.code != 1 {
		t.Fatalf("tampered lock on an empty home: exit %d, want 1 (partial)", r.code)
	}
	if _, err := os.Stat(filepath.Join(e, "plugins", tampered.Plugins[0].Name)); !os.IsNotExist(err) {
		t.Fatalf("the tampered plugin was installed: %v", err)
	}

	// --frozen: a lock that leaves something to resolve is refused whole.
	loose := readLock(t, f.lock)
	loose.Plugins[1].ContentDigest = ""
	loosePath := writeLock(t, loose)
	if r := f.sync(t.TempDir(), loosePath, "--yes", "--frozen"); r.code != 1 || r.json(t)["errorCode"] != "install.not_pinnable" || !strings.Contains(r.stdout, "has no contentDigest") {
		t.Fatalf("--frozen with a digest left out: exit %d\n%s", r.code, r.stdout)
	}
	if r := f.sync(b, loosePath, "--dry-run"); r.code != 0 {
		t.Fatalf("the same lock without --frozen: exit %d\n%s", r.code, r.stdout)
	}

	raw, err := os.ReadFile(f.lock)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, lock, want string }{
		{"newer version", strings.Replace(string(raw), `"version": 1`, `"version": 2`, 1), "newer reasonix"},
		{"duplicate plugin", strings.Replace(string(raw), `"name": "ext"`, `"name": "fmt"`, 1), "two plugins are named"},
		{"unknown field", strings.Replace(string(raw), `"version": 1`, `"version": 1, "extra": true`, 1), "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.lock.json")
			if err := os.WriteFile(path, []byte(tc.lock), 0o644); err != nil {
				t.Fatal(err)
			}
			r := f.sync(b, path, "--yes")
			if r.code != 1 || !strings.Contains(r.stdout, tc.want) {
				t.Fatalf("exit %d, want 1 with %q:\n%s\n%s", r.code, tc.want, r.stdout, r.stderr)
			}
			if !bytes.Equal(registryBytes(t, b), before) {
				t.Fatal("the registry changed")
			}
		})
	}
}

// TestSyncPruneAndOffline: plugins the lock lacks stay unless --prune;
// a sync from the cache (--offline) makes no request at all.
func TestSyncPruneAndOffline(t *testing.T) {
	f := newSyncFixture(t)
	b := t.TempDir()
	if r := f.sync(b, f.lock, "--yes"); r.code != 0 {
		t.Fatalf("sync B: %s", r.stderr)
	}
	smaller := readLock(t, f.lock)
	smaller.Plugins = smaller.Plugins[1:] // without docs (sorted: docs, ext, fmt, lint)
	if smaller.Plugins[0].Name == "docs" || readLock(t, f.lock).Plugins[0].Name != "docs" {
		t.Fatalf("lock order: %+v", smaller.Plugins)
	}
	path := writeLock(t, smaller)
	r := f.sync(b, path, "--yes")
	if r.code != 0 || len(lockedEntries(t, b)) != 4 {
		t.Fatalf("sync without --prune: exit %d, %d plugins, want 4 kept\n%s", r.code, len(lockedEntries(t, b)), r.stdout)
	}
	if a := actionNamed(t, r.json(t), "docs"); a["action"] != "keep" || !strings.Contains(strings.Join(toStrings(a["warnings"]), " "), "--prune") {
		t.Fatalf("docs without --prune: %v", a)
	}
	if r := f.sync(b, path, "--yes", "--prune"); r.code != 0 || len(lockedEntries(t, b)) != 3 {
		t.Fatalf("sync --prune: exit %d, %d plugins, want 3\n%s", r.code, len(lockedEntries(t, b)), r.stdout)
	}
	if _, err := os.Stat(filepath.Join(b, "plugins", "docs")); !os.IsNotExist(err) {
		t.Fatalf("docs' folder is still there: %v", err)
	}

	// docs again, from the cache: not one request.
	f.gh.ResetCounts()
	r = f.sync(b, f.lock, "--yes", "--offline")
	if r.code != 0 || len(lockedEntries(t, b)) != 4 {
		t.Fatalf("offline sync: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := f.gh.Counts().Total; n != 0 {
		t.Fatalf("offline sync made %d requests, want 0", n)
	}
	// An empty home has nothing cached: offline says what is missing.
	r = f.sync(t.TempDir(), f.lock, "--dry-run", "--offline")
	if r.code != 1 || !strings.Contains(r.stdout, "install.offline_miss") {
		t.Fatalf("offline sync of an empty home: exit %d\n%s", r.code, r.stdout)
	}
	if n := f.gh.Counts().Total; n != 0 {
		t.Fatalf("offline syncs made %d requests, want 0", n)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestSyncAfterMarketplaceRead: a sha-pinned external entry moves in its
// marketplace, which A reads again (marketplace update) without updating
// the plugin; A's lock still pins the plugin where its entry was read, so
// B's sync installs A's commit instead of refusing a digest.
func TestSyncAfterMarketplaceRead(t *testing.T) {
	t.Parallel()
	f := newSyncFixture(t)
	old := lockedEntries(t, f.home)
	f.extCommit = f.ext.Commit("main", claudePlugin("", "ext", "external two"))
	f.acme.Commit("main", f.acmeFiles("formats code"))
	if r := runBinary(t, f.home, f.gh.Env(), "marketplace", "update", "acme"); r.code != 0 {
		t.Fatalf("marketplace update on A: %s", r.stderr)
	}
	if got := lockedEntries(t, f.home); !equalEntries(got, old) {
		t.Fatalf("marketplace update moved plugins: %+v", got)
	}
	lock := filepath.Join(t.TempDir(), "reasonix.lock.json")
	if r := runBinary(t, f.home, f.gh.Env(), "lock", "-o", lock); r.code != 0 {
		t.Fatalf("lock: %s", r.stderr)
	}
	b := t.TempDir()
	if r := f.sync(b, lock, "--yes", "--frozen"); r.code != 0 {
		t.Fatalf("sync B: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := lockedEntries(t, b); !equalEntries(got, old) {
		t.Fatalf("B after sync:\n%+v\nwant A's:\n%+v", got, old)
	}
}
