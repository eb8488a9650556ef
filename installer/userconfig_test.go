package installer

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/manifest"
)

const testSecret = "s3cr3t-VALUE-7f1c"

// configuredFiles is a Claude plugin with userConfig options used by an MCP
// server, a hook and an LSP server; extraOptions adds option members.
func configuredFiles(name, version, extraOptions string) map[string]string {
	return map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"` + version + `",
  "userConfig":{
    "api_key":{"type":"string","title":"API key","description":"The service key","required":true,"sensitive":true},
    "endpoint":{"type":"string","title":"Endpoint","description":"Where the service is","required":true},
    "port":{"type":"number","title":"Port","description":"Local port","default":8080,"min":1,"max":65535}` + extraOptions + `
  },
  "mcpServers":{"svc":{"command":"node","args":["server.js","--port","${user_config.port}"],"env":{"API_KEY":"${user_config.api_key}","ENDPOINT":"${user_config.endpoint}"}}},
  "lspServers":{"ls":{"command":"ls-server","args":["--endpoint","${user_config.endpoint}"],"extensionToLanguage":{".x":"x"}}}
}`,
		"hooks/hooks.json":  `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"notify","args":["${user_config.endpoint}","${user_config.api_key}"]}]}]}}`,
		"skills/s/SKILL.md": "---\ndescription: s\n---\nbody\n",
	}
}

func configuredPlugin(t *testing.T, name string) string {
	t.Helper()
	return writeTree(t, filepath.Join(t.TempDir(), name), configuredFiles(name, "1.0.0", ""))
}

// homeLeaks lists the files under home, config/ aside, that hold secret.
func homeLeaks(t *testing.T, home, secret string) []string {
	t.Helper()
	var leaks []string
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(home, "config") {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(secret)) {
			leaks = append(leaks, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return leaks
}

func optionByKey(t *testing.T, opts []ConfigOption, key string) ConfigOption {
	t.Helper()
	for _, o := range opts {
		if o.Key == key {
			return o
		}
	}
	t.Fatalf("no option %q in %+v", key, opts)
	return ConfigOption{}
}

func TestUserConfigPlanListsOptionsAndRequiresValues(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := configuredPlugin(t, "uc")
	resp, err := env.install(Request{Source: mustSource(src)}, Approval{DryRun: true})
	wantCode(t, err, resp, plugind.CodeConfigRequired, `uc needs a value for option api_key ("API key"), option endpoint ("Endpoint")`, "--config api_key=<value> --config endpoint=<value>")
	a := resp.Actions[0]
	if a.Status != ActionBlocked || len(a.UserConfig) != 3 {
		t.Fatalf("action %s with options %+v", a.Status, a.UserConfig)
	}
	key := optionByKey(t, a.UserConfig, "api_key")
	if key.Title != "API key" || key.Description != "The service key" || key.Type != "string" || !key.Required || !key.Sensitive || key.Set {
		t.Errorf("api_key listed as %+v", key)
	}
	port := optionByKey(t, a.UserConfig, "port")
	if port.Default == nil || port.Default.Text() != "8080" || port.Set || port.Value != nil {
		t.Errorf("port listed as %+v", port)
	}
	// The options are in the JSON the CLI and the API print.
	out, _ := json.Marshal(resp)
	for _, want := range []string{`"userConfig":[{"key":"api_key","title":"API key","description":"The service key","type":"string","required":true,"sensitive":true,"set":false}`, `"default":8080`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("plan JSON lacks %s:\n%s", want, out)
		}
	}
	if _, err := os.Stat(env.home.RegistryPath()); !os.IsNotExist(err) {
		t.Fatalf("a refused plan wrote the registry: %v", err)
	}
}

func TestUserConfigInstallSubstitutesAndKeepsSecretsInConfigDir(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := configuredPlugin(t, "uc")
	cfg := map[string]string{"api_key": testSecret, "endpoint": "https://svc.example", "port": "9090"}
	dry, err := env.install(Request{Source: mustSource(src), Config: cfg}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	a := dry.Actions[0]
	svc := a.MCPServers[0]
	if !reflect.DeepEqual(svc.Args, []string{"server.js", "--port", "9090"}) || svc.Env["ENDPOINT"] != "https://svc.example" || svc.Env["API_KEY"] != "${user_config.api_key}" {
		t.Errorf("MCP server as planned: %+v", svc)
	}
	if h := a.Hooks[0]; !reflect.DeepEqual(h.Args, []string{"https://svc.example", "${user_config.api_key}"}) {
		t.Errorf("hook as planned: %+v", h)
	}
	if l := a.LSPServers[0]; !reflect.DeepEqual(l.Args, []string{"--endpoint", "https://svc.example"}) {
		t.Errorf("LSP server as planned: %+v", l)
	}
	if k := optionByKey(t, a.UserConfig, "api_key"); !k.Set || k.Value != nil {
		t.Errorf("api_key: %+v", k)
	}
	if p := optionByKey(t, a.UserConfig, "port"); !p.Set || p.Value.Text() != "9090" {
		t.Errorf("port: %+v", p)
	}
	planJSON, _ := json.Marshal(dry)
	if strings.Contains(string(planJSON), testSecret) {
		t.Fatalf("the plan shows the secret: %s", planJSON)
	}
	stored, err := (&Plan{asked: Request{Source: mustSource(src), Config: cfg}, Actions: dry.Actions}).MarshalStored()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), testSecret) || !strings.Contains(string(stored), `"endpoint":"https://svc.example"`) {
		t.Fatalf("stored plan: %s", stored)
	}

	resp, err := env.install(Request{Source: mustSource(src), Config: cfg}, Approval{Yes: true, PlanID: planIDOf(t, dry.PlanID)})
	if err != nil || !resp.Applied {
		t.Fatalf("install: %v %+v", err, resp)
	}
	reg, err := LoadRegistry(env.home.RegistryPath())
	if err != nil {
		t.Fatal(err)
	}
	e, _ := reg.Find("uc")
	if e.Config["endpoint"].Text() != "https://svc.example" || e.Config["port"].Text() != "9090" || len(e.Config) != 2 || e.ConfigFile != "uc.json" {
		t.Fatalf("registry entry: config %v file %q", e.Config, e.ConfigFile)
	}
	if leaks := homeLeaks(t, env.home.Dir, testSecret); len(leaks) > 0 {
		t.Fatalf("the secret is written outside config/: %v", leaks)
	}
	info, err := os.Stat(filepath.Join(env.home.ConfigDir(), "uc.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v", info, err)
	}
	if dir, _ := os.Stat(env.home.ConfigDir()); dir.Mode().Perm() != 0o700 {
		t.Fatalf("config/ has mode %v", dir.Mode().Perm())
	}
	data, _ := os.ReadFile(filepath.Join(env.home.ConfigDir(), "uc.json"))
	if !strings.Contains(string(data), testSecret) || strings.Contains(string(data), "svc.example") {
		t.Fatalf("config file holds: %s", data)
	}
	// The installed copy is the plugin as published: placeholders intact.
	installed, _ := os.ReadFile(filepath.Join(e.Root, ".claude-plugin", "plugin.json"))
	if !strings.Contains(string(installed), "${user_config.api_key}") || !strings.Contains(string(installed), "${user_config.port}") {
		t.Fatalf("the installed copy was rewritten: %s", installed)
	}

	// What the host substitutes when it launches: every value.
	texts, err := env.in.ResolveUserConfig("uc")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"api_key": testSecret, "endpoint": "https://svc.example", "port": "9090"}; !reflect.DeepEqual(texts, want) {
		t.Fatalf("resolved %v, want %v", texts, want)
	}
	if env := manifest.OptionEnv(texts); !strings.Contains(strings.Join(env, "\n"), "CLAUDE_PLUGIN_OPTION_API_KEY="+testSecret) {
		t.Fatalf("hook env %v", env)
	}
	// What list and show say: values substituted, the secret never.
	shown, err := env.in.Show(context.Background(), "uc")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shown.MCPServers[0].Args, []string{"server.js", "--port", "9090"}) || !optionByKey(t, shown.UserConfig, "api_key").Set {
		t.Fatalf("show: %+v %+v", shown.MCPServers[0], shown.UserConfig)
	}
	if b, _ := json.Marshal(shown); strings.Contains(string(b), testSecret) {
		t.Fatalf("show prints the secret: %s", b)
	}
	// Export writes the plugin's own files, placeholders and all.
	var zipBuf bytes.Buffer
	if _, err := env.in.Export(context.Background(), "uc", &zipBuf); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(zipBuf.Bytes(), []byte(testSecret)) || bytes.Contains(zipBuf.Bytes(), []byte("svc.example")) {
		t.Fatal("the export holds a configured value")
	}

	// The same install again, same values: nothing to do. Other values:
	// a conflict that says how to change them.
	again, err := env.install(Request{Source: mustSource(src), Config: cfg}, Approval{Yes: true})
	if err != nil || again.Status != StatusUpToDate {
		t.Fatalf("same install again: %v %s", err, again.Status)
	}
	other := map[string]string{"api_key": testSecret, "endpoint": "https://other.example"}
	conflict, err := env.install(Request{Source: mustSource(src), Config: other}, Approval{DryRun: true})
	wantCode(t, err, conflict, plugind.CodeConflict, "rerun with --replace to install it again with this configuration")

	// Remove deletes the config file with the plugin.
	if _, err := env.in.Remove(context.Background(), "uc", false); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(env.home.ConfigDir()); len(ents) != 0 {
		t.Fatalf("config/ after remove: %v", ents)
	}
}

func TestUserConfigBadValues(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := configuredPlugin(t, "uc")
	base := map[string]string{"api_key": testSecret, "endpoint": "https://svc.example"}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range base {
			out[a] = b
		}
		out[k] = v
		return out
	}
	cases := []struct {
		name   string
		config map[string]string
		code   plugind.Code
		want   string
	}{
		{"not a number", with("port", "eighty"), plugind.CodeConfigInvalid, `uc: option port ("Port"): "eighty" is not a number`},
		{"over max", with("port", "70000"), plugind.CodeConfigInvalid, `option port ("Port") must be at most 65535`},
		{"empty", with("endpoint", "  "), plugind.CodeConfigInvalid, `option endpoint ("Endpoint"): the value is empty`},
		{"undeclared key", with("nope", "1"), plugind.CodeConfigInvalid, `--config nope: uc declares no option "nope"; its options: api_key, endpoint, port`},
		{"another plugin", with("other.port", "1"), plugind.CodeConfigInvalid, `--config other.port: this plan has no plugin "other"`},
		{"bad key", with("1x", "1"), plugind.CodeConfigInvalid, `"1x" is not an option key`},
		{"NAME.KEY of this plugin is fine", with("uc.port", "eighty"), plugind.CodeConfigInvalid, `"eighty" is not a number`},
	}
	for _, c := range cases {
		resp, err := env.install(Request{Source: mustSource(src), Config: c.config}, Approval{DryRun: true})
		wantCode(t, err, resp, c.code, c.want)
		if b, _ := json.Marshal(resp); strings.Contains(string(b), testSecret) {
			t.Errorf("%s: the response shows the secret: %s", c.name, b)
		}
	}
	ok, err := env.install(Request{Source: mustSource(src), Config: with("uc.port", "81")}, Approval{DryRun: true})
	if err != nil || optionByKey(t, ok.Actions[0].UserConfig, "port").Value.Text() != "81" {
		t.Fatalf("NAME.KEY: %v", err)
	}
}

// planIds cover non-sensitive values, and whether a sensitive one is set,
// never its value.
func TestUserConfigPlanID(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := configuredPlugin(t, "uc")
	plan := func(cfg map[string]string) string {
		resp, err := env.install(Request{Source: mustSource(src), Config: cfg}, Approval{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return resp.PlanID
	}
	a := plan(map[string]string{"api_key": "one", "endpoint": "https://a.example"})
	if b := plan(map[string]string{"api_key": "two", "endpoint": "https://a.example"}); a != b {
		t.Errorf("the planId depends on a sensitive value: %s vs %s", a, b)
	}
	if c := plan(map[string]string{"api_key": "one", "endpoint": "https://b.example"}); a == c {
		t.Error("the planId does not cover a non-sensitive value")
	}
	if d := plan(map[string]string{"api_key": "one", "endpoint": "https://a.example", "port": "8080"}); a == d {
		t.Error("setting an option to its default does not show in the planId")
	}
	// Approving a plan with other values is refused, naming the options.
	resp, err := env.install(Request{Source: mustSource(src), Config: map[string]string{"api_key": "one", "endpoint": "https://b.example"}}, Approval{Yes: true, PlanID: planIDOf(t, a)})
	wantCode(t, err, resp, plugind.CodeApprovalDenied)
}

// A replace keeps the installed values; what the request gives wins.
func TestUserConfigReplaceKeepsValues(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := configuredPlugin(t, "uc")
	if _, err := env.install(Request{Source: mustSource(src), Config: map[string]string{"api_key": testSecret, "endpoint": "https://a.example"}}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	resp, err := env.install(Request{Source: mustSource(src), Replace: true, Config: map[string]string{"port": "7000"}}, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("replace: %v %+v", err, resp)
	}
	texts, err := env.in.ResolveUserConfig("uc")
	if err != nil {
		t.Fatal(err)
	}
	if texts["api_key"] != testSecret || texts["endpoint"] != "https://a.example" || texts["port"] != "7000" {
		t.Fatalf("after replace: %v", texts)
	}
	if k := optionByKey(t, resp.Actions[0].UserConfig, "endpoint"); !k.Kept {
		t.Errorf("endpoint not marked kept: %+v", k)
	}
	// One config file: the new one, under the plugin's name or beside it.
	ents, _ := os.ReadDir(env.home.ConfigDir())
	reg, _ := LoadRegistry(env.home.RegistryPath())
	e, _ := reg.Find("uc")
	if len(ents) != 1 || ents[0].Name() != e.ConfigFile {
		t.Fatalf("config/ holds %v, the registry names %q", ents, e.ConfigFile)
	}
	if leaks := homeLeaks(t, env.home.Dir, testSecret); len(leaks) > 0 {
		t.Fatalf("the secret is written outside config/: %v", leaks)
	}
}

// A failed publication leaves the old config file, and no new one.
func TestUserConfigFailedPublicationWritesNoConfig(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := configuredPlugin(t, "uc")
	if _, err := env.install(Request{Source: mustSource(src), Config: map[string]string{"api_key": "old-secret", "endpoint": "https://a.example"}}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	before := env.registryBytes()
	oldFile, _ := os.ReadFile(filepath.Join(env.home.ConfigDir(), "uc.json"))
	reg := env.home.RegistryPath()
	env.hook = func(step string) {
		if step == "after-swap" {
			// The registry cannot be replaced: publication fails.
			_ = os.Rename(reg, reg+".aside")
			_ = os.Mkdir(reg, 0o700)
			_ = os.WriteFile(filepath.Join(reg, "x"), nil, 0o600)
		}
	}
	_, err := env.install(Request{Source: mustSource(src), Replace: true, Config: map[string]string{"api_key": testSecret}}, Approval{Yes: true})
	if err == nil {
		t.Fatal("publication did not fail")
	}
	env.hook = nil
	_ = os.RemoveAll(reg)
	_ = os.Rename(reg+".aside", reg)
	if !bytes.Equal(env.registryBytes(), before) {
		t.Fatal("the registry changed")
	}
	ents, _ := os.ReadDir(env.home.ConfigDir())
	if len(ents) != 1 || ents[0].Name() != "uc.json" {
		t.Fatalf("config/ holds %v after a failed publication", ents)
	}
	if now, _ := os.ReadFile(filepath.Join(env.home.ConfigDir(), "uc.json")); !bytes.Equal(now, oldFile) {
		t.Fatal("the old config file changed")
	}
	if leaks := homeLeaks(t, env.home.Dir, testSecret); len(leaks) > 0 {
		t.Fatalf("the secret is left outside config/: %v", leaks)
	}
}

// Files of config/ that the registry does not name (a crash's leftovers)
// are swept by the next mutation.
func TestUserConfigSweep(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := configuredPlugin(t, "uc")
	if _, err := env.install(Request{Source: mustSource(src), Config: map[string]string{"api_key": testSecret, "endpoint": "https://a.example"}}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(env.home.ConfigDir(), "uc@0123abcd.json")
	if err := os.WriteFile(stray, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := env.in.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatal("a stray config file survived the sweep")
	}
	if _, err := os.Stat(filepath.Join(env.home.ConfigDir(), "uc.json")); err != nil {
		t.Fatal("the live config file was swept")
	}
}

// A registry entry cannot point its config file outside config/.
func TestUserConfigFileNameChecked(t *testing.T) {
	for _, f := range []string{"../plugin-packages.json", "other.json", "uc@.json", "uc", "/etc/passwd", "uc@a/b.json"} {
		if _, err := configFileOf(Entry{Name: "uc", ConfigFile: f}); err == nil {
			t.Errorf("%q accepted", f)
		}
	}
	for _, f := range []string{"uc.json", "uc@0a1b2c.json"} {
		if _, err := configFileOf(Entry{Name: "uc", ConfigFile: f}); err != nil {
			t.Errorf("%q refused: %v", f, err)
		}
	}
}

// Update keeps the values; an option the new version makes required asks
// for a value as install does; --config on an up-to-date plugin changes
// just its configuration.
func TestUserConfigUpdate(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "uc")
	repo.Commit("main", configuredFiles("uc", "1.0.0", ""))
	env := newRemoteEnv(t, gh, remoteOpts{})
	if _, err := env.install(Request{Source: mustSource("git:github.com/acme/uc"), Config: map[string]string{"api_key": testSecret, "endpoint": "https://a.example"}}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	update := func(cfg map[string]string, ap Approval) (*Response, error) {
		return env.in.Update(context.Background(), UpdateRequest{Names: []string{"uc"}}, Request{Config: cfg}, ap)
	}
	same, err := update(nil, Approval{DryRun: true})
	if err != nil || same.Status != StatusUpToDate {
		t.Fatalf("update of an unchanged plugin: %v %s", err, same.Status)
	}

	// A new version with a new required option.
	repo.Commit("main", configuredFiles("uc", "2.0.0", `,
    "region":{"type":"string","title":"Region","description":"Where","required":true}`))
	resp, err := update(nil, Approval{DryRun: true})
	wantCode(t, err, resp, plugind.CodeConfigRequired, `uc needs a value for option region ("Region")`)
	resp, err = update(map[string]string{"region": "eu"}, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("update with the new value: %v %+v", err, resp)
	}
	texts, _ := env.in.ResolveUserConfig("uc")
	if texts["api_key"] != testSecret || texts["endpoint"] != "https://a.example" || texts["region"] != "eu" {
		t.Fatalf("values after update: %v", texts)
	}

	// Only the configuration changes: the update says what it sets.
	resp, err = update(map[string]string{"port": "9999", "api_key": "rotated-key"}, Approval{DryRun: true})
	if err != nil || resp.Status != StatusPlanned {
		t.Fatalf("reconfigure: %v %s", err, resp.Status)
	}
	a := resp.Actions[0]
	summary := strings.Join(a.Diff.Summary, "\n")
	if !strings.Contains(summary, "sets option port: 8080 → 9999") && !strings.Contains(summary, "sets option port: 9999") {
		t.Errorf("diff summary: %s", summary)
	}
	if !strings.Contains(summary, "sets sensitive option api_key (value not shown)") || strings.Contains(summary, "rotated-key") {
		t.Errorf("diff summary: %s", summary)
	}
	if _, err := update(map[string]string{"port": "9999", "api_key": "rotated-key"}, Approval{Yes: true, PlanID: planIDOf(t, resp.PlanID)}); err != nil {
		t.Fatal(err)
	}
	texts, _ = env.in.ResolveUserConfig("uc")
	if texts["api_key"] != "rotated-key" || texts["port"] != "9999" || texts["region"] != "eu" {
		t.Fatalf("values after reconfigure: %v", texts)
	}
	for _, s := range []string{testSecret, "rotated-key"} {
		if leaks := homeLeaks(t, env.home.Dir, s); len(leaks) > 0 {
			t.Fatalf("%s is written outside config/: %v", s, leaks)
		}
	}
}

// In a plan of several plugins a bare KEY must name one plugin's option.
func TestUserConfigBulkAddressing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := merge(
		under("plugins/one", configuredFiles("one", "1.0.0", "")),
		under("plugins/two", configuredFiles("two", "1.0.0", "")),
		map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "m", entry("one", "./plugins/one"), entry("two", "./plugins/two"))},
	)
	writeTree(t, root, files)
	env := newEnv(t)
	resp, err := env.install(Request{Source: mustSource(root), Config: map[string]string{"endpoint": "https://x.example"}}, Approval{DryRun: true})
	wantCode(t, err, resp, plugind.CodeConfigInvalid, "one, two all declare option \"endpoint\"", "--config NAME.endpoint=<value>")
	resp, err = env.install(Request{Source: mustSource(root), Config: map[string]string{"one.endpoint": "https://x.example", "one.api_key": testSecret}}, Approval{DryRun: true})
	// two lacks its values: the plan installs one, and says why not two.
	if err != nil || resp.Status != StatusPlanned {
		t.Fatalf("status %s err %v", resp.Status, err)
	}
	byName := map[string]Action{}
	for _, a := range resp.Actions {
		byName[a.Name] = a
	}
	if byName["one"].Status != ActionReady || byName["two"].Status != ActionBlocked || byName["two"].Code() != plugind.CodeConfigRequired {
		t.Fatalf("one %s, two %s %v", byName["one"].Status, byName["two"].Status, byName["two"].Err)
	}
	if !strings.Contains(byName["two"].ErrorText(), "--config two.api_key=<value> --config two.endpoint=<value>") {
		t.Errorf("two's hint: %s", byName["two"].ErrorText())
	}
}
