package installer

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// depsMarketplace writes a local marketplace "acme" whose plugins declare
// dependencies of every shape, and a second marketplace "other" beside it.
// It returns both folders.
func depsMarketplace(t *testing.T) (acme, other string) {
	t.Helper()
	dir := t.TempDir()
	plugin := func(name, version string, deps ...any) map[string]string {
		m := map[string]any{"name": name, "version": version}
		if len(deps) > 0 {
			m["dependencies"] = deps
		}
		b, _ := json.Marshal(m)
		return map[string]string{
			".claude-plugin/plugin.json": string(b),
			"skills/s/SKILL.md":          "---\ndescription: " + name + "\n---\n",
		}
	}
	files := merge(
		under("plugins/deploy-kit", plugin("deploy-kit", "3.1.0", "audit-logger", map[string]any{"name": "secrets-vault", "version": "~2.1.0"})),
		under("plugins/audit-logger", plugin("audit-logger", "1.0.0", "log-core")),
		under("plugins/log-core", plugin("log-core", "1.0.0")),
		under("plugins/secrets-vault", plugin("secrets-vault", "2.1.3")),
		under("plugins/strict-kit", plugin("strict-kit", "1.0.0", map[string]any{"name": "secrets-vault", "version": "^3"})),
		under("plugins/cyc-a", plugin("cyc-a", "1.0.0", "cyc-b")),
		under("plugins/cyc-b", plugin("cyc-b", "1.0.0", "cyc-a")),
		under("plugins/needs-ghost", plugin("needs-ghost", "1.0.0", "ghost")),
		under("plugins/needs-other", plugin("needs-other", "1.0.0", "thing@other")),
		under("plugins/needs-third", plugin("needs-third", "1.0.0", "thing@third")),
		under("plugins/entry-deps", plugin("entry-deps", "1.0.0")),
	)
	names := []string{"deploy-kit", "audit-logger", "log-core", "secrets-vault", "strict-kit", "cyc-a", "cyc-b", "needs-ghost", "needs-other", "needs-third"}
	var entries []map[string]any
	for _, n := range names {
		entries = append(entries, entry(n, "./plugins/"+n))
	}
	entries = append(entries, entry("entry-deps", "./plugins/entry-deps", "dependencies", []string{"log-core"}))
	doc := map[string]any{
		"name": "acme", "owner": map[string]any{"name": "acme"},
		"allowCrossMarketplaceDependenciesOn": []string{"other"},
		"plugins":                             entries,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	files[".claude-plugin/marketplace.json"] = string(b)
	acme = writeTree(t, filepath.Join(dir, "acme"), files)
	other = writeTree(t, filepath.Join(dir, "other"), merge(
		under("plugins/thing", plugin("thing", "1.0.0")),
		map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "other", entry("thing", "./plugins/thing"))},
	))
	return acme, other
}

func TestDependenciesArePlannedWithThePlugin(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	acme, _ := depsMarketplace(t)
	dry, err := env.install(Request{Source: mustSource(acme), Name: "deploy-kit"}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	acts := actionsByName(dry)
	if len(acts) != 4 {
		t.Fatalf("plan of deploy-kit: %d actions %v, want it and its three dependencies", len(acts), dry.Actions)
	}
	kit := acts["deploy-kit"]
	if kit.Status != ActionReady || kit.Dependency || !reflect.DeepEqual(kit.DependsOn, []string{"audit-logger", "secrets-vault"}) {
		t.Fatalf("deploy-kit: %+v", kit)
	}
	for name, of := range map[string]string{"audit-logger": "deploy-kit", "secrets-vault": "deploy-kit", "log-core": "audit-logger"} {
		a := acts[name]
		if a.Status != ActionReady || !a.Dependency || !reflect.DeepEqual(a.DependencyOf, []string{of}) || a.MarketplaceName != "acme" {
			t.Errorf("%s: status %s dependency %v of %v market %q", name, a.Status, a.Dependency, a.DependencyOf, a.MarketplaceName)
		}
	}
	applied, err := env.install(Request{Source: mustSource(acme), Name: "deploy-kit"}, Approval{Yes: true, PlanID: planIDOf(t, dry.PlanID)})
	if err != nil || !applied.Applied {
		t.Fatalf("apply: %v %+v", err, applied)
	}
	reg, _ := LoadRegistry(env.home.RegistryPath())
	for name, want := range map[string]struct {
		dep  bool
		deps []string
	}{
		"deploy-kit":    {false, []string{"audit-logger", "secrets-vault"}},
		"audit-logger":  {true, []string{"log-core"}},
		"log-core":      {true, nil},
		"secrets-vault": {true, nil},
	} {
		e, ok := reg.Find(name)
		if !ok || e.Dependency != want.dep || !reflect.DeepEqual(e.Dependencies, want.deps) {
			t.Errorf("registry %s: %+v", name, e)
		}
	}

	// A plugin others need is not removed by accident.
	before := env.registryBytes()
	resp, err := env.in.Remove(ctxBG(), "secrets-vault", false)
	wantCode(t, err, resp, plugind.CodeConflict, `"secrets-vault" is needed by deploy-kit`, "--force")
	if !bytes.Equal(before, env.registryBytes()) {
		t.Fatal("a refused remove changed the registry")
	}
	// Nothing to prune while deploy-kit needs them all.
	if p, err := env.in.Prune(ctxBG(), true); err != nil || p.Status != StatusUpToDate || len(p.Actions) != 0 {
		t.Fatalf("prune with everything needed: %v %+v", err, p)
	}
	if _, err := env.in.Remove(ctxBG(), "deploy-kit", false); err != nil {
		t.Fatal(err)
	}
	// Now all three are unneeded, log-core only through audit-logger.
	before = env.registryBytes()
	p, err := env.in.Prune(ctxBG(), true)
	if err != nil || p.Status != StatusPlanned || names(p.Actions) != "audit-logger log-core secrets-vault" {
		t.Fatalf("prune --dry-run: %v %s %s", err, p.Status, names(p.Actions))
	}
	if !bytes.Equal(before, env.registryBytes()) {
		t.Fatal("prune --dry-run changed the registry")
	}
	p, err = env.in.Prune(ctxBG(), false)
	if err != nil || p.Status != StatusRemoved || !p.Applied {
		t.Fatalf("prune --yes: %v %+v", err, p)
	}
	if reg, _ := LoadRegistry(env.home.RegistryPath()); len(reg.Plugins) != 0 {
		t.Fatalf("after prune: %+v", reg.Plugins)
	}
	if left := env.pluginsDirEntries(); len(left) != 0 {
		t.Fatalf("plugins left on disk after prune: %v", left)
	}
}

// A dependency installed already satisfies its dependents and stays the
// user's own: prune never takes it.
func TestInstalledDependencySatisfies(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	acme, _ := depsMarketplace(t)
	if _, err := env.install(Request{Source: mustSource(acme), Names: []string{"secrets-vault"}}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	resp, err := env.install(Request{Source: mustSource(acme), Name: "deploy-kit"}, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("install: %v %+v", err, resp)
	}
	if _, planned := actionsByName(resp)["secrets-vault"]; planned {
		t.Fatalf("the installed dependency was planned again: %v", names(resp.Actions))
	}
	if _, err := env.in.Remove(ctxBG(), "deploy-kit", false); err != nil {
		t.Fatal(err)
	}
	p, err := env.in.Prune(ctxBG(), false)
	if err != nil || names(p.Actions) != "audit-logger log-core" {
		t.Fatalf("prune: %v %s", err, names(p.Actions))
	}
	if reg, _ := LoadRegistry(env.home.RegistryPath()); len(reg.Plugins) != 1 || reg.Plugins[0].Name != "secrets-vault" {
		t.Fatalf("prune took the user's own plugin: %+v", reg.Plugins)
	}
	// Forced removal of a needed plugin says who is left without it.
	if _, err := env.install(Request{Source: mustSource(acme), Name: "deploy-kit"}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	rm, err := env.in.Remove(ctxBG(), "secrets-vault", true)
	if err != nil || !containsFragment(rm.Warnings, "deploy-kit needed secrets-vault") {
		t.Fatalf("remove --force: %v %+v", err, rm)
	}
}

// Dependencies that cannot be met block their dependents, each saying why.
func TestDependencyProblemsBlock(t *testing.T) {
	t.Parallel()
	acme, other := depsMarketplace(t)
	tests := []struct {
		name  string
		known bool // "other" is a known marketplace
		code  plugind.Code
		says  []string
		ok    []string // the names the plan installs
	}{
		{name: "cyc-a", code: plugind.CodeBlocked, says: []string{"dependency cycle: cyc-a → cyc-b → cyc-a"}},
		{name: "needs-ghost", code: plugind.CodeBlocked, says: []string{"needs ghost, which marketplace acme does not list"}},
		{name: "strict-kit", code: plugind.CodeBlocked, says: []string{"needs secrets-vault ^3", "has 2.1.3"}},
		{name: "needs-third", code: plugind.CodeBlocked, says: []string{"thing@third", "allowCrossMarketplaceDependenciesOn", `"third" is not one`}},
		{name: "needs-other", code: plugind.CodeBlocked, says: []string{"thing@other", `no known marketplace is named "other"`}},
		{name: "needs-other", known: true, ok: []string{"needs-other", "thing"}},
		{name: "entry-deps", ok: []string{"entry-deps", "log-core"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			if tt.known {
				if _, err := env.in.AddMarketplace(ctxBG(), mustSource(other), false); err != nil {
					t.Fatal(err)
				}
			}
			before := env.registryBytes()
			resp, err := env.install(Request{Source: mustSource(acme), Name: tt.name}, Approval{Yes: true})
			if tt.ok != nil {
				if err != nil || !resp.Applied || names(resp.Actions) != strings.Join(tt.ok, " ") {
					t.Fatalf("install: %v %s %+v", err, names(resp.Actions), resp)
				}
				if tt.known && actionsByName(resp)["thing"].MarketplaceName != "other" {
					t.Errorf("thing is recorded under %q", actionsByName(resp)["thing"].MarketplaceName)
				}
				return
			}
			wantCode(t, err, resp, tt.code, tt.says...)
			if !bytes.Equal(before, env.registryBytes()) {
				t.Fatal("a refused install changed the registry")
			}
		})
	}
}

// In a bulk install of the whole marketplace, dependencies link to the
// plan's own actions, and a blocked plugin takes its dependents with it.
func TestBulkInstallLinksDependencies(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	acme, _ := depsMarketplace(t)
	resp, err := env.install(Request{Source: mustSource(acme)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	acts := actionsByName(resp)
	if len(acts) != 11 {
		t.Fatalf("%d actions: %s", len(acts), names(resp.Actions))
	}
	for _, n := range []string{"deploy-kit", "audit-logger", "log-core", "secrets-vault", "entry-deps"} {
		if a := acts[n]; a.Status != ActionReady || a.Dependency {
			t.Errorf("%s: %s dependency=%v %v", n, a.Status, a.Dependency, a.Err)
		}
	}
	if got := acts["log-core"].DependencyOf; !reflect.DeepEqual(got, []string{"audit-logger", "entry-deps"}) {
		t.Errorf("log-core is a dependency of %v", got)
	}
	for _, n := range []string{"cyc-a", "cyc-b", "needs-ghost", "strict-kit", "needs-other", "needs-third"} {
		if a := acts[n]; a.Status != ActionBlocked {
			t.Errorf("%s: %s", n, a.Status)
		}
	}
	if !containsFragment(resp.Warnings, "blocked cyc-a") {
		t.Errorf("the blocked are not in the warnings: %v", resp.Warnings)
	}
}

func names(actions []Action) string {
	var out []string
	for _, a := range actions {
		out = append(out, a.Name)
	}
	return strings.Join(out, " ")
}
