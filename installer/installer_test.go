package installer

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/store"
)

type testEnv struct {
	t    testing.TB
	home Home
	in   *Installer
	hook func(step string)
}

func newEnv(t *testing.T) *testEnv { return newEnvBudget(t, plugind.Budget{}) }

// newEnvBudget is newEnv with budget injected everywhere (store, resolver,
// installer): refusal tests use small ones instead of writing 20,000 files.
func newEnvBudget(t *testing.T, budget plugind.Budget) *testEnv {
	t.Helper()
	env := &testEnv{t: t, home: Home{Dir: filepath.Join(t.TempDir(), "home")}}
	st, err := store.Open(env.home.StoreDir(), store.Options{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	env.in = New(Config{
		Home:    env.home,
		Budget:  budget,
		Sources: resolver.New(resolver.Config{Store: st, Budget: budget}),
		StepHook: func(step string) {
			if env.hook != nil {
				env.hook(step)
			}
		},
	})
	return env
}

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func claudePlugin(t *testing.T, name, version string) string {
	t.Helper()
	return writeTree(t, filepath.Join(t.TempDir(), name), map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"` + version + `","description":"test plugin"}`,
		"skills/hello/SKILL.md":      "---\nname: hello\ndescription: Say hello\n---\nHello.\n",
		"commands/wave.md":           "---\ndescription: Wave\nargument-hint: <who>\n---\nWave at $1\n",
	})
}

func (e *testEnv) install(req Request, ap Approval) (*Response, error) {
	e.t.Helper()
	return e.in.Install(context.Background(), req, ap)
}

func (e *testEnv) mustInstall(src string) *Response {
	e.t.Helper()
	resp, err := e.install(Request{Source: mustSource(src)}, Approval{Yes: true})
	if err != nil {
		e.t.Fatalf("install %s: %v", src, err)
	}
	return resp
}

func (e *testEnv) registryBytes() []byte {
	e.t.Helper()
	b, err := os.ReadFile(e.home.RegistryPath())
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	return b
}

// pluginsDirEntries lists plugins/ so tests can assert nothing was left.
func (e *testEnv) pluginsDirEntries() []string {
	ents, _ := os.ReadDir(e.home.PluginsDir())
	var names []string
	for _, x := range ents {
		names = append(names, x.Name())
	}
	return names
}

func (e *testEnv) storeStagingEntries() []string {
	ents, _ := os.ReadDir(filepath.Join(e.home.StoreDir(), "staging"))
	var names []string
	for _, x := range ents {
		names = append(names, x.Name())
	}
	return names
}

func wantCode(t *testing.T, err error, resp *Response, code plugind.Code, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s, got success: %+v", code, resp)
	}
	if got := plugind.CodeOf(err); got != code {
		t.Fatalf("code = %q, want %q (err: %v)", got, code, err)
	}
	if resp != nil && (resp.OK || resp.Code() != code) {
		t.Fatalf("response ok=%v errorCode=%q, want %q", resp.OK, resp.Code(), code)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}

func TestLifecycleDryRunInstallReplaceRemove(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := claudePlugin(t, "hello", "1.0.0")

	dry, err := env.install(Request{Source: mustSource(src)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Status != StatusPlanned || dry.Applied || len(dry.Actions) != 1 {
		t.Fatalf("dry run: %+v", dry)
	}
	if !strings.HasPrefix(dry.PlanID, "low:sha256:") || len(dry.PlanID) != len("low:sha256:")+32 {
		t.Errorf("planId = %q", dry.PlanID)
	}
	if env.registryBytes() != nil || len(env.pluginsDirEntries()) != 0 {
		t.Fatal("dry run wrote the registry or plugins/")
	}
	a := dry.Actions[0]
	if a.Name != "hello" || a.ManifestKind != "claude" || len(a.Skills) != 1 || a.Skills[0].Invocation != "/hello:hello" {
		t.Errorf("action = %+v", a)
	}

	resp, err := env.install(Request{Source: mustSource(src)}, Approval{Yes: true, PlanID: planIDOf(t, dry.PlanID)})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Applied || resp.PlanID != dry.PlanID || resp.ContentDigest != dry.ContentDigest {
		t.Fatalf("install: %+v", resp)
	}
	reg, err := LoadRegistry(env.home.RegistryPath())
	if err != nil {
		t.Fatal(err)
	}
	e, ok := reg.Find("hello")
	if !ok || e.Root != env.home.PluginRoot("hello") || e.ContentDigest != a.ContentDigest || !e.Enabled || e.Version != "1.0.0" {
		t.Fatalf("registry entry = %+v", e)
	}
	if got, _, _ := plugind.TreeDigest(e.Root, plugind.DefaultBudget); got != e.ContentDigest {
		t.Fatalf("installed root digest %s != recorded %s", got, e.ContentDigest)
	}

	// The same install again: up to date, nothing written.
	before := env.registryBytes()
	resp, err = env.install(Request{Source: mustSource(src)}, Approval{Yes: true})
	if err != nil || !resp.OK || resp.Status != StatusUpToDate || resp.Applied || resp.Actions[0].Action != ActionKeep {
		t.Fatalf("installing what is installed: %v %+v", err, resp)
	}
	if !bytes.Equal(before, env.registryBytes()) {
		t.Fatal("registry changed on an up-to-date install")
	}
	// Same name, other content, without --replace: conflict, registry
	// untouched.
	changed := claudePlugin(t, "hello", "1.0.1")
	resp, err = env.install(Request{Source: mustSource(changed)}, Approval{Yes: true})
	wantCode(t, err, resp, plugind.CodeConflict, "--replace")
	if !bytes.Equal(before, env.registryBytes()) {
		t.Fatal("registry changed on conflict")
	}

	// Replace with a new version.
	v2 := claudePlugin(t, "hello", "2.0.0")
	resp, err = env.install(Request{Source: mustSource(v2), Replace: true}, Approval{Yes: true})
	if err != nil || resp.Actions[0].Action != ActionReplace {
		t.Fatalf("replace: %v %+v", err, resp)
	}
	info, err := env.in.Show(context.Background(), "hello")
	if err != nil || info.Version != "2.0.0" || len(info.Problems) != 0 {
		t.Fatalf("show after replace: %v %+v", err, info)
	}
	if ents := env.pluginsDirEntries(); len(ents) != 1 {
		t.Errorf("plugins/ holds %v after replace; want only the live root", ents)
	}

	if _, _, err := env.in.SetEnabled(context.Background(), "hello", false, false); err != nil {
		t.Fatal(err)
	}
	if info, _ := env.in.Show(context.Background(), "hello"); info.Enabled || info.Loaded {
		t.Fatalf("disable did not stick: %+v", info.Entry)
	}
	rm, err := env.in.Remove(context.Background(), "hello", false)
	if err != nil || !rm.OK {
		t.Fatalf("remove: %v %+v", err, rm)
	}
	if ents := env.pluginsDirEntries(); len(ents) != 0 {
		t.Errorf("plugins/ holds %v after remove", ents)
	}
	if _, err := env.in.Show(context.Background(), "hello"); plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Errorf("show after remove: %v", err)
	}
}

func TestNeedsApproval(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	_, err := env.install(Request{Source: mustSource(claudePlugin(t, "p", "1"))}, Approval{})
	if err != ErrNeedsApproval {
		t.Fatalf("err = %v", err)
	}
}

func TestBadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		req   func(dir string) Request
		code  plugind.Code
		frags []string
	}{
		{
			name:  "no manifest",
			files: map[string]string{"README.md": "hi"},
			code:  plugind.CodeInvalidSource,
			frags: []string{"reasonix-plugin.json", ".codex-plugin/plugin.json", ".claude-plugin/plugin.json"},
		},
		{
			name:  "apiVersion missing",
			files: map[string]string{"reasonix-plugin.json": `{"name":"x"}`},
			code:  plugind.CodeInvalidSource,
			frags: []string{"apiVersion", "reasonix.io/plugin/v2"},
		},
		{
			name:  "apiVersion v1",
			files: map[string]string{"reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v1","name":"x"}`},
			code:  plugind.CodeInvalidSource,
			frags: []string{"apiVersion", "reasonix.io/plugin/v2"},
		},
		{
			name:  "apiVersion v2.1",
			files: map[string]string{"reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2.1","name":"x"}`},
			code:  plugind.CodeInvalidSource,
			frags: []string{"apiVersion", "reasonix.io/plugin/v2"},
		},
		{
			name:  "unknown nested field",
			files: map[string]string{"reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2","name":"x","contributes":{"skils":["skills"]}}`},
			code:  plugind.CodeInvalidSource,
			frags: []string{"contributes.skils"},
		},
		{
			name:  "path with ..",
			files: map[string]string{"reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2","name":"x","contributes":{"skills":["../skills"]}}`},
			code:  plugind.CodeInvalidSource,
			frags: []string{"../skills"},
		},
		{
			name:  "absolute path",
			files: map[string]string{"reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2","name":"x","contributes":{"skills":["/etc"]}}`},
			code:  plugind.CodeInvalidSource,
			frags: []string{"/etc"},
		},
		{
			name:  "name with slash",
			files: map[string]string{".claude-plugin/plugin.json": `{"name":"ok"}`, "skills/a/SKILL.md": "---\ndescription: a\n---\n"},
			req:   func(dir string) Request { return Request{Source: mustSource(dir), Name: "a/b"} },
			code:  plugind.CodeInvalidSource,
			frags: []string{"a/b"},
		},
		{
			name:  "name with dotdot",
			files: map[string]string{".claude-plugin/plugin.json": `{"name":"ok"}`, "skills/a/SKILL.md": "---\ndescription: a\n---\n"},
			req:   func(dir string) Request { return Request{Source: mustSource(dir), Name: "..evil"} },
			code:  plugind.CodeInvalidSource,
			frags: []string{".."},
		},
		{
			name:  "name with space",
			files: map[string]string{".claude-plugin/plugin.json": `{"name":"ok"}`, "skills/a/SKILL.md": "---\ndescription: a\n---\n"},
			req:   func(dir string) Request { return Request{Source: mustSource(dir), Name: "my plugin"} },
			code:  plugind.CodeInvalidSource,
			frags: []string{"my plugin"},
		},
		{
			name:  "name too long",
			files: map[string]string{".claude-plugin/plugin.json": `{"name":"ok"}`, "skills/a/SKILL.md": "---\ndescription: a\n---\n"},
			req: func(dir string) Request {
				return Request{Source: mustSource(dir), Name: strings.Repeat("n", 65)}
			},
			code:  plugind.CodeInvalidSource,
			frags: []string{"65 characters"},
		},
		{
			name:  "manifest name with space",
			files: map[string]string{".claude-plugin/plugin.json": `{"name":"bad name"}`, "skills/a/SKILL.md": "---\ndescription: a\n---\n"},
			code:  plugind.CodeInvalidSource,
			frags: []string{"bad name"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			env.mustInstall(claudePlugin(t, "existing", "1"))
			before := env.registryBytes()
			dir := writeTree(t, t.TempDir(), tt.files)
			req := Request{Source: mustSource(dir)}
			if tt.req != nil {
				req = tt.req(dir)
			}
			resp, err := env.install(req, Approval{Yes: true})
			wantCode(t, err, resp, tt.code, tt.frags...)
			if !bytes.Equal(before, env.registryBytes()) {
				t.Error("registry changed")
			}
			if ents := env.pluginsDirEntries(); len(ents) != 1 || ents[0] != "existing" {
				t.Errorf("plugins/ = %v", ents)
			}
		})
	}
}

func TestEscapingSymlinkInManifestPathRefused(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	outside := writeTree(t, t.TempDir(), map[string]string{"a/SKILL.md": "---\ndescription: x\n---\n"})
	dir := writeTree(t, t.TempDir(), map[string]string{
		"reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2","name":"x","contributes":{"skills":["skills"]}}`,
	})
	if err := os.Symlink(outside, filepath.Join(dir, "skills")); err != nil {
		t.Fatal(err)
	}
	resp, err := env.install(Request{Source: mustSource(dir)}, Approval{Yes: true})
	wantCode(t, err, resp, plugind.CodeInvalidSource, "skills")
	if env.registryBytes() != nil {
		t.Fatal("registry written")
	}
}

func TestSizeBudgets(t *testing.T) {
	t.Parallel()
	sparse := func(t *testing.T, path string, size int64) {
		t.Helper()
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("21 MiB file installs", func(t *testing.T) {
		t.Parallel()
		env := newEnv(t)
		dir := claudePlugin(t, "big", "1")
		sparse(t, filepath.Join(dir, "model.bin"), 21<<20)
		env.mustInstall(dir)
	})
	t.Run("over 256 MiB refused", func(t *testing.T) {
		t.Parallel()
		env := newEnv(t)
		dir := claudePlugin(t, "huge", "1")
		sparse(t, filepath.Join(dir, "a.bin"), 200<<20)
		sparse(t, filepath.Join(dir, "b.bin"), 57<<20)
		resp, err := env.install(Request{Source: mustSource(dir)}, Approval{Yes: true})
		wantCode(t, err, resp, plugind.CodeBudgetExceeded, "size budget", "over by")
		if len(env.pluginsDirEntries()) != 0 || env.registryBytes() != nil {
			t.Fatal("something was written")
		}
	})
	t.Run("over the file budget refused", func(t *testing.T) {
		t.Parallel()
		// The default budget's count is tarball's and plugind's business
		// (TestTarGzDefaultFileBudget); here a small injected one.
		env := newEnvBudget(t, plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 50})
		dir := claudePlugin(t, "many", "1")
		for i := 0; i < 60; i++ {
			if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := env.install(Request{Source: mustSource(dir)}, Approval{Yes: true})
		wantCode(t, err, resp, plugind.CodeBudgetExceeded, "file-count budget", "limit 50", "over by")
		if len(env.pluginsDirEntries()) != 0 || env.registryBytes() != nil {
			t.Fatal("something was written")
		}
	})
}

func TestChangedBetweenDryRunAndApproval(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.mustInstall(claudePlugin(t, "other", "1"))
	src := claudePlugin(t, "hello", "1.0.0")
	dry, err := env.install(Request{Source: mustSource(src)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	before := env.registryBytes()
	writeTree(t, src, map[string]string{"skills/hello/SKILL.md": "---\nname: hello\ndescription: Say hello!\n---\nHello.\n"})
	resp, err := env.install(Request{Source: mustSource(src)}, Approval{Yes: true, PlanID: planIDOf(t, dry.PlanID)})
	wantCode(t, err, resp, plugind.CodeApprovalDenied, dry.PlanID)
	if !bytes.Equal(before, env.registryBytes()) {
		t.Fatal("registry changed")
	}
}

func TestChangedDuringApplyIsDigestMismatch(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.mustInstall(claudePlugin(t, "other", "1"))
	src := claudePlugin(t, "hello", "1.0.0")
	env.hook = func(step string) {
		if step == "before-staging" {
			writeTree(t, src, map[string]string{"commands/wave.md": "tampered"})
		}
	}
	before := env.registryBytes()
	resp, err := env.install(Request{Source: mustSource(src)}, Approval{Yes: true})
	wantCode(t, err, resp, plugind.CodeDigestMismatch, "hello")
	if !bytes.Equal(before, env.registryBytes()) {
		t.Fatal("registry changed")
	}
	if ents := env.pluginsDirEntries(); len(ents) != 1 {
		t.Fatalf("plugins/ = %v", ents)
	}
}

func TestCorruptRegistryFailsClosed(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.mustInstall(claudePlugin(t, "hello", "1"))
	corrupt := []byte(`{"version":1,"plugins":[{"name":"hello",`)
	if err := os.WriteFile(env.home.RegistryPath(), corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["list"] = env.in.List(ctx)
	_, checks["show"] = env.in.Show(ctx, "hello")
	_, _, checks["enable"] = env.in.SetEnabled(ctx, "hello", true, false)
	_, checks["remove"] = env.in.Remove(ctx, "hello", false)
	_, checks["install"] = env.install(Request{Source: mustSource(claudePlugin(t, "new", "1"))}, Approval{Yes: true})
	_, checks["export"] = env.in.Export(ctx, "hello", &bytes.Buffer{})
	_, checks["capabilities"] = env.in.Capabilities(ctx)
	for op, err := range checks {
		if plugind.CodeOf(err) != plugind.CodeRegistryUnreadable {
			t.Errorf("%s: err = %v, want registry.unreadable", op, err)
		}
	}
	if got, _ := os.ReadFile(env.home.RegistryPath()); !bytes.Equal(got, corrupt) {
		t.Fatal("corrupt registry was overwritten")
	}
}

func TestBrokenRootsAreExcludedNotFatal(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.mustInstall(claudePlugin(t, "deleted", "1"))
	env.mustInstall(claudePlugin(t, "edited", "1"))
	env.mustInstall(claudePlugin(t, "fine", "1"))
	if err := os.RemoveAll(env.home.PluginRoot("deleted")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, env.home.PluginRoot("edited"), map[string]string{"commands/wave.md": "edited by hand"})

	infos, err := env.in.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]PluginInfo{}
	for _, p := range infos {
		byName[p.Name] = p
	}
	if p := byName["deleted"]; p.Loaded || len(p.Problems) == 0 || !strings.Contains(p.Problems[0], "missing") || len(p.Warnings) == 0 {
		t.Errorf("deleted: %+v", p)
	}
	if p := byName["edited"]; p.Loaded || len(p.Problems) == 0 || !strings.Contains(p.Problems[0], "digest differs") {
		t.Errorf("edited: %+v", p)
	}
	if p := byName["fine"]; !p.Loaded || len(p.Problems) != 0 {
		t.Errorf("fine: %+v", p)
	}
	d, err := env.in.Show(context.Background(), "edited")
	if err != nil || len(d.Problems) == 0 || !strings.Contains(d.Problems[0], "digest differs") {
		t.Errorf("doctor edited: %v %+v", err, d)
	}
}

func TestExportStripsCredentialsAndReinstalls(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := claudePlugin(t, "mcp", "1")
	writeTree(t, src, map[string]string{
		".mcp.json": `{"mcpServers":{"api":{"command":"node","args":["server.js"],"env":{"API_TOKEN":"sk-live-123456"}}}}`,
	})
	env.mustInstall(src)
	var buf bytes.Buffer
	info, err := env.in.Export(context.Background(), "mcp", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.RequiredEnv) != 1 || info.RequiredEnv[0] != "API_TOKEN" {
		t.Errorf("required env = %v", info.RequiredEnv)
	}
	if bytes.Contains(buf.Bytes(), []byte("sk-live-123456")) {
		t.Fatal("secret left in export")
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range zr.File {
		if f.Name == ".mcp.json" {
			found = true
		}
	}
	if !found {
		t.Fatal("zip lacks .mcp.json")
	}
	zipPath := filepath.Join(t.TempDir(), "mcp.zip")
	if err := os.WriteFile(zipPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	other := newEnv(t)
	resp, err := other.install(Request{Source: mustSource(zipPath)}, Approval{Yes: true})
	if err != nil || !resp.Applied || resp.Actions[0].Name != "mcp" {
		t.Fatalf("install exported zip: %v %+v", err, resp)
	}
}

func TestZipCannotBeLinked(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	zipPath := filepath.Join(t.TempDir(), "p.zip")
	writeZip(t, zipPath, map[string]string{".claude-plugin/plugin.json": `{"name":"p"}`})
	resp, err := env.install(Request{Source: mustSource(zipPath), Link: true}, Approval{Yes: true})
	wantCode(t, err, resp, plugind.CodeInvalidSource, "--link")
}

func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLinkInstall(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := claudePlugin(t, "dev", "1")
	resp, err := env.install(Request{Source: mustSource(src), Link: true}, Approval{Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentDigest != "" || resp.Actions[0].Root != src {
		t.Fatalf("link: %+v", resp)
	}
	if _, err := env.in.Remove(context.Background(), "dev", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, ".claude-plugin", "plugin.json")); err != nil {
		t.Fatal("remove deleted the linked folder")
	}
}
