package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// fetchText is a fetch as the tables below spell it:
// "runner package@version pinned|unpinned".
func fetchText(f RuntimeFetch) string {
	pin := "unpinned"
	if f.Pinned {
		pin = "pinned"
	}
	s := f.Runner + " " + f.Package
	if f.Version != "" {
		s += " @" + f.Version
	}
	return s + " " + pin
}

func fetchTexts(list []RuntimeFetch) string {
	parts := make([]string, len(list))
	for i, f := range list {
		parts[i] = fetchText(f)
	}
	return strings.Join(parts, "; ")
}

// TestRuntimeFetchesOfShell: every runner form of the table, pinned and
// not, inside the shell text a hook's command is: quoting, wrappers,
// sequences, assignments, absolute paths and ${CLAUDE_PLUGIN_ROOT}.
func TestRuntimeFetchesOfShell(t *testing.T) {
	t.Parallel()
	const sha = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct{ cmd, want string }{
		// npx and its options
		{"npx -y @scope/pkg@latest", "npx @scope/pkg @latest unpinned"},
		{"npx --yes pkg", "npx pkg unpinned"},
		{"npx -y @scope/pkg@1.2.3", "npx @scope/pkg @1.2.3 pinned"},
		{"npx pkg@1.2.3-beta.1 --flag", "npx pkg @1.2.3-beta.1 pinned"},
		{"npx pkg@^1.2.0", "npx pkg @^1.2.0 unpinned"},
		{"npx pkg@~1.2", "npx pkg @~1.2 unpinned"},
		{"npx pkg@1.x", "npx pkg @1.x unpinned"},
		{"npx pkg@1.2", "npx pkg @1.2 unpinned"},
		{"npx pkg@next", "npx pkg @next unpinned"},
		{"npx -p @scope/tool@2.0.0 tool-cli --help", "npx @scope/tool @2.0.0 pinned"},
		{"npx --package=@scope/tool tool-cli", "npx @scope/tool unpinned"},
		{"npx --registry https://npm.example.test -y pkg@3.0.0", "npx pkg @3.0.0 pinned"},
		{"npx -y -- pkg@1.0.0 --port 3", "npx pkg @1.0.0 pinned"},
		{"npx -c 'uvx tool'", "uvx tool unpinned"},
		{"npx github:owner/repo#0123456789abcdef0123456789abcdef01234567", "npx github:owner/repo @0123456789abcdef0123456789abcdef01234567 pinned"},
		{"npx github:owner/repo#main", "npx github:owner/repo @main unpinned"},
		{"npx https://example.test/pkg.tgz", "npx https://example.test/pkg.tgz unpinned"},
		{"npx ./local-script.js", ""},
		{"npx ${CLAUDE_PLUGIN_ROOT}/bin/tool", ""},
		// npm exec, bunx, pnpm, yarn
		{"npm exec -y -- @scope/pkg@4.5.6", "npm exec @scope/pkg @4.5.6 pinned"},
		{"npm x pkg", "npm exec pkg unpinned"},
		{"npm install pkg", ""},
		{"bunx pkg@latest", "bunx pkg @latest unpinned"},
		{"bun x --bun pkg@1.0.0", "bunx pkg @1.0.0 pinned"},
		{"pnpm dlx create-thing@7.1.0", "pnpm dlx create-thing @7.1.0 pinned"},
		{"pnpm dlx --package=a@1.0.0 --package b a-cli", "pnpm dlx a @1.0.0 pinned; pnpm dlx b unpinned"},
		{"pnpx thing", "pnpm dlx thing unpinned"},
		{"pnpm exec thing", ""},
		{"yarn dlx -p tool@2.0.0 tool", "yarn dlx tool @2.0.0 pinned"},
		{"yarn dlx tool", "yarn dlx tool unpinned"},
		// Python
		{"uvx mcp-server-fetch", "uvx mcp-server-fetch unpinned"},
		{"uvx mcp-server-fetch==2025.1.17", "uvx mcp-server-fetch @2025.1.17 pinned"},
		{"uvx tool@1.4.0", "uvx tool @1.4.0 pinned"},
		{"uvx tool@latest", "uvx tool @latest unpinned"},
		{"uvx 'tool>=1.0'", "uvx tool @>=1.0 unpinned"},
		{"uvx 'tool==1.*'", "uvx tool @1.* unpinned"},
		{"uvx --from 'tool[extra]==0.3.1' tool-cli", "uvx tool @0.3.1 pinned"},
		{"uvx --from git+https://github.com/o/r@0123456789abcdef0123456789abcdef01234567 r", "uvx git+https://github.com/o/r @0123456789abcdef0123456789abcdef01234567 pinned"},
		{"uvx --from git+https://github.com/o/r r", "uvx git+https://github.com/o/r unpinned"},
		{"uvx --from 'tool[api] @ git+https://github.com/o/r.git' tool", "uvx tool @ git+https://github.com/o/r.git unpinned"},
		{"uvx --from 'tool @ git+https://github.com/o/r.git@0123456789abcdef0123456789abcdef01234567' tool", "uvx tool @ git+https://github.com/o/r.git @0123456789abcdef0123456789abcdef01234567 pinned"},
		{"uvx --from 'tool @ https://example.test/tool-1.0.whl' tool", "uvx tool @ https://example.test/tool-1.0.whl unpinned"},
		{"uvx --python 3.12 --with requests tool==1.0.0", "uvx tool @1.0.0 pinned; uvx requests unpinned"},
		{"uvx --from ${CLAUDE_PLUGIN_ROOT} my-tool", ""},
		{"uv tool run ruff@0.6.0 check", "uvx ruff @0.6.0 pinned"},
		{"uv run script.py", ""},
		{"pipx run black", "pipx run black unpinned"},
		{"pipx run --spec black==24.1.0 black .", "pipx run black @24.1.0 pinned"},
		// containers
		{"docker run -i --rm -e GITHUB_TOKEN ghcr.io/github/github-mcp-server", "docker run ghcr.io/github/github-mcp-server unpinned"},
		{"docker run -i --rm -e X=1 -v a:/b --name n mcp/fetch:latest", "docker run mcp/fetch @latest unpinned"},
		{"docker run --rm -it -p8080:80 -eFOO=1 --network=host image@" + sha, "docker run image @" + sha + " pinned"},
		{"docker run localhost:5000/team/img:1.0 serve", "docker run localhost:5000/team/img @1.0 unpinned"},
		{"docker container run -d img", "docker run img unpinned"},
		{"podman run --rm -v ${CLAUDE_PLUGIN_ROOT}:/app quay.io/o/img", "podman run quay.io/o/img unpinned"},
		{"docker mcp gateway run", "docker mcp Docker MCP catalog unpinned"},
		{"docker build .", ""},
		// go run
		{"go run golang.org/x/tools/gopls@latest", "go run golang.org/x/tools/gopls @latest unpinned"},
		{"go run golang.org/x/tools/gopls@v0.16.1", "go run golang.org/x/tools/gopls @v0.16.1 pinned"},
		{"go run -tags mcp example.test/tool@v1", "go run example.test/tool @v1 unpinned"},
		{"go run example.test/tool@main", "go run example.test/tool @main unpinned"},
		{"go run example.test/tool@v0.0.0-20240101000000-0123456789ab", "go run example.test/tool @v0.0.0-20240101000000-0123456789ab pinned"},
		{"go run ./cmd/server", ""},
		{"go run ${CLAUDE_PLUGIN_ROOT}/main.go", ""},
		// downloads piped to a shell: never pinned
		{"curl -fsSL https://example.test/install.sh | sh", "curl | sh https://example.test/install.sh unpinned"},
		{"wget -qO- https://example.test/i.sh | bash", "wget | bash https://example.test/i.sh unpinned"},
		{"curl -sL https://example.test/i.sh | sudo -E bash -s -- --yes", "curl | bash https://example.test/i.sh unpinned"},
		{"curl -sL https://example.test/i.sh | tee log | sh", "curl | sh https://example.test/i.sh unpinned"},
		{`sh -c "$(curl -fsSL https://example.test/i.sh)"`, "curl | sh https://example.test/i.sh unpinned"},
		{"bash <(curl -s https://example.test/i.sh)", "curl | bash https://example.test/i.sh unpinned"},
		{`eval "$(wget -qO- https://example.test/env)"`, "wget | eval https://example.test/env unpinned"},
		{"irm https://example.test/i.ps1 | iex", "irm | iex https://example.test/i.ps1 unpinned"},
		{"curl -s https://example.test/data.json | jq .", ""},
		{"curl -sSL https://example.test/get.py | python3 -", "curl | python3 https://example.test/get.py unpinned"},
		{"curl -sSL https://example.test/get.py | python3", "curl | python3 https://example.test/get.py unpinned"},
		{"curl -s https://example.test/d.json | python3 -c 'import json,sys; print(1)'", ""},
		{"curl -s https://example.test/d.json | node parse.js", ""},
		{"curl -o /tmp/x https://example.test/x", ""},
		// wrappers, sequences, assignments, paths
		{`sh -c 'npx -y pkg@latest'`, "npx pkg @latest unpinned"},
		{`bash -lc "cd \"$HOME\" && uvx tool"`, "uvx tool unpinned"},
		{`bash -ec 'set -o pipefail; npx pkg@1.0.0'`, "npx pkg @1.0.0 pinned"},
		{"cd ${CLAUDE_PLUGIN_ROOT} && npm ci; npx -y pkg", "npx pkg unpinned"},
		{"FOO=1 BAR='a b' npx pkg@2.0.0", "npx pkg @2.0.0 pinned"},
		{"env -u X FOO=1 npx pkg", "npx pkg unpinned"},
		{"/usr/bin/npx -y pkg", "npx pkg unpinned"},
		{"${CLAUDE_PLUGIN_ROOT}/node_modules/.bin/npx pkg", "npx pkg unpinned"},
		{`"${CLAUDE_PLUGIN_ROOT}/scripts/check.sh" --fast`, ""},
		{"node ${CLAUDE_PLUGIN_ROOT}/dist/index.js", ""},
		{"timeout 30 npx pkg", "npx pkg unpinned"},
		{"exec sudo -u bob npx pkg", "npx pkg unpinned"},
		{"nohup uvx tool > /dev/null 2>&1 &", "uvx tool unpinned"},
		{"command -v npx >/dev/null || exit 0", ""},
		{"test -x ./bin && npx pkg || uvx alt", "npx pkg unpinned; uvx alt unpinned"},
		{"x=$(npx -y pkg --version)", "npx pkg unpinned"},
		{"echo 'npx -y pkg' # a comment: npx other", ""},
		{"echo \"npx pkg\"", ""},
		{"cmd /c npx -y pkg", "npx pkg unpinned"},
		{"npx.cmd -y pkg", "npx pkg unpinned"},
		{"npx -y pkg\\\n  --flag", "npx pkg unpinned"},
	} {
		got := fetchTexts(newFetchReader(&Package{}, tc.cmd, nil).fetchesOfShell(tc.cmd, 0))
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.cmd, got, tc.want)
		}
	}
}

// TestRuntimeFetchesOfArgv: servers start without a shell; a shell they
// start is read in turn.
func TestRuntimeFetchesOfArgv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		command string
		args    []string
		want    string
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-github"}, "npx @modelcontextprotocol/server-github unpinned"},
		{"npx", []string{"-y", "@modelcontextprotocol/server-github@2025.4.8"}, "npx @modelcontextprotocol/server-github @2025.4.8 pinned"},
		{"/opt/homebrew/bin/uvx", []string{"tool==1.0.0"}, "uvx tool @1.0.0 pinned"},
		{"docker", []string{"run", "-i", "--rm", "-e", "TOKEN", "mcp/github"}, "docker run mcp/github unpinned"},
		{"sh", []string{"-c", "npx -y pkg@latest"}, "npx pkg @latest unpinned"},
		{"bash", []string{"-c", `exec "$(curl -s https://example.test/run)"`}, "curl | exec https://example.test/run unpinned"},
		{"cmd", []string{"/c", "npx", "-y", "pkg"}, "npx pkg unpinned"},
		{"npx -y pkg@1.0.0", nil, "npx pkg @1.0.0 pinned"}, // a whole command line in "command"
		{"${CLAUDE_PLUGIN_ROOT}/servers/run", []string{"--stdio"}, ""},
		{"node", []string{"npx", "pkg"}, ""}, // an argument, not a program
		{"npx", []string{"-y", "pkg; rm -rf /"}, "npx pkg; rm -rf / unpinned"},
	} {
		got := fetchTexts(newFetchReader(&Package{}, tc.command, tc.args).fetchesOfLaunch(tc.command, tc.args))
		if got != tc.want {
			t.Errorf("%s %q:\n got %q\nwant %q", tc.command, tc.args, got, tc.want)
		}
	}
}

// TestRuntimeFetchCommands: the command shown is the one that fetches,
// masked.
func TestRuntimeFetchCommands(t *testing.T) {
	t.Parallel()
	p := &Package{
		Hooks: []Hook{
			{Event: "PreToolUse", Command: "echo hi", Form: HookShell},
			{Event: "PreToolUse", Command: `sh -c 'cd x && npx -y @scope/pkg@latest --token ghp_abcdefghijklmnopqrstuvwxyz0123456789'`, Form: HookShell},
			{Event: "Stop", Command: "curl -fsSL 'https://user:hunter22@example.test/i.sh' | sh", Form: HookShell},
		},
		MCPServers: []MCPServer{
			{Name: "remote", Transport: "http", URL: "https://api.example.test/mcp?token=abc123456789"},
			{Name: "gh", Transport: "stdio", Command: "docker", Args: []string{"run", "-i", "ghcr.io/github/github-mcp-server"}},
		},
		LSPServers: []LSPServer{{Name: "gopls", Command: "go", Args: []string{"run", "golang.org/x/tools/gopls@v0.16.1"}}},
	}
	got := RuntimeFetchesOf(p)
	var lines []string
	for _, f := range got {
		lines = append(lines, fmt.Sprintf("%s | %s | %s | %v | %s", f.Where, f.Kind, f.Runner, f.Unpinned(), f.Describe()))
	}
	want := []string{
		"hook PreToolUse #2 | code | npx | true | npx -y @scope/pkg@latest --token *** (hook PreToolUse #2)",
		"hook Stop #1 | code | curl | sh | true | curl -fsSL https://***@example.test/i.sh | sh (hook Stop #1)",
		"mcpServer remote | remote |  | false | remote service https://api.example.test/mcp?token=*** (mcpServer remote)",
		"mcpServer gh | code | docker run | true | docker run -i ghcr.io/github/github-mcp-server (mcpServer gh)",
		"lspServer gopls | code | go run | false | go run golang.org/x/tools/gopls@v0.16.1 (lspServer gopls)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range got {
		if strings.Contains(f.Command+f.Package, "hunter22") || strings.Contains(f.Command, "ghp_") || strings.Contains(f.Package, "abc123456789") {
			t.Errorf("%s: a credential is shown: %q %q", f.Where, f.Command, f.Package)
		}
	}
}

// TestRuntimeFetchFixture: a plugin that runs fetched code from its hooks
// file, .mcp.json and .lsp.json lists each one, where it runs and whether
// it is pinned, the lines of the plugin's own shell scripts that a hook or
// server launches (${CLAUDE_PLUGIN_ROOT}/scripts/…, a script sourcing
// another, and itself, once) included; validate warns about exactly the unpinned ones, naming
// the file that declares them, and install still reads the plugin.
func TestRuntimeFetchFixture(t *testing.T) {
	t.Parallel()
	root := filepath.Join("testdata", "runtimefetch")
	pkg, err := Load(root, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Blocked {
		t.Fatalf("blocked: %s", pkg.BlockReason)
	}
	var got []string
	for _, f := range pkg.RuntimeFetches {
		line := f.Where + ": " + fetchText(f) + " (" + f.Kind + ")"
		if f.Script != "" {
			line += " in " + f.Script
		}
		got = append(got, line)
	}
	want := []string{
		"hook SessionStart #1: npx @scope/pkg @latest unpinned (code)",
		"hook SessionStart #2: uvx tool @1.2.3 pinned (code)",
		"hook SessionStart #3: curl | sh https://example.test/install.sh unpinned (code)",
		"hook PreToolUse #1: uvx ruff @0.6.0 pinned (code) in scripts/common.sh",
		"hook PreToolUse #1: npx guard-rules @latest unpinned (code) in scripts/guard.sh",
		"hook PreToolUse #2: bunx guard-cli @2.0.0 pinned (code)",
		"hook PreToolUse #3: go run example.test/lint @main unpinned (code)",
		"mcpServer events:  https://mcp.example.test/sse unpinned (remote)",
		"mcpServer fetch: uvx mcp-server-fetch unpinned (code)",
		"mcpServer github: docker run ghcr.io/github/github-mcp-server unpinned (code)",
		"mcpServer pinned-image: docker run mcp/fetch @sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef pinned (code)",
		"mcpServer remote:  https://mcp.example.test/mcp unpinned (remote)",
		"mcpServer scripted: uvx mcp-thing unpinned (code) in scripts/serve",
		"mcpServer wrapped: npx @modelcontextprotocol/server-memory @2025.4.25 pinned (code)",
		"lspServer gopls: go run golang.org/x/tools/gopls @v0.16.1 pinned (code)",
		"lspServer pyright: pipx run pyright unpinned (code)",
	}
	// MCP servers keep their declaration order; compare as sets of lines
	// in the order hooks, MCP servers, LSP servers.
	slices.Sort(got[7:14])
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r := ValidatePluginDir(root, ValidateOptions{})
	if !r.OK() {
		t.Fatalf("validate: %+v", r.Errors)
	}
	var warned []string
	for _, w := range r.Warnings {
		if strings.Contains(w.Message, "unpinned code fetched at run time") {
			warned = append(warned, w.File+": "+w.Message)
		}
	}
	if len(warned) != 8 {
		t.Errorf("validate warns %d times, want 8 (the unpinned ones):\n%s", len(warned), strings.Join(warned, "\n"))
	}
	for _, want := range []string{
		"hooks/hooks.json: hook SessionStart #1 runs unpinned code fetched at run time: npx -y @scope/pkg@latest (\"latest\" is not an exact version; give an exact version (@1.2.3))",
		"hooks/hooks.json: hook SessionStart #3 runs unpinned code fetched at run time: curl -fsSL https://example.test/install.sh | sudo sh (a downloaded script is never pinned)",
		".mcp.json: mcpServer github runs unpinned code fetched at run time: docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server (no version is given; only an image digest (@sha256:…) pins an image)",
		// A script's line is named by the script.
		"scripts/guard.sh: hook PreToolUse #1 runs unpinned code fetched at run time: npx --yes guard-rules@latest check $@ (\"latest\" is not an exact version; give an exact version (@1.2.3))",
		"scripts/serve: mcpServer scripted runs unpinned code fetched at run time: uvx mcp-thing (no version is given; give an exact version (==1.2.3))",
		".lsp.json: lspServer pyright runs unpinned code fetched at run time: pipx run --spec pyright pyright-langserver --stdio (no version is given; give an exact version (==1.2.3))",
	} {
		if !slices.Contains(warned, want) {
			t.Errorf("validate does not say\n%s\nit says\n%s", want, strings.Join(warned, "\n"))
		}
	}
}

// FuzzRuntimeFetches: any command line reads without a panic, and what it
// reads is bounded by its length (the reader's budget).
func FuzzRuntimeFetches(f *testing.F) {
	for _, seed := range []string{
		"npx -y @scope/pkg@latest", `sh -c "$(curl -fsSL https://x.test/i.sh)"`, "bash <(curl -s https://x.test)",
		"a=$(b $(c $(d `e`))) | sh", "docker run -it -e X=1 img@sha256:00", "uvx --from 'a @ git+https://h/r.git@v1' a",
		"'unterminated", "$((1+(2)))", "cmd /c npx", "echo ${X:-$(npx y)}", "\\", "<(", "$(",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		fr := newFetchReader(&Package{}, cmd, nil)
		for _, x := range fr.fetchesOfShell(cmd, 0) {
			if x.Kind != FetchCode || x.Runner == "" {
				t.Fatalf("%q: a fetch without a runner: %+v", cmd, x)
			}
		}
		_ = newFetchReader(&Package{}, cmd, []string{cmd}).fetchesOfLaunch("sh", []string{"-c", cmd})
	})
}

// TestRuntimeFetchReaderIsBounded: substitutions nested as deep as the
// reader goes, many times over, are read within the budget.
func TestRuntimeFetchReaderIsBounded(t *testing.T) {
	t.Parallel()
	nested := "npx a"
	for range maxShellDepth + 2 {
		nested = `sh -c "$(echo x) $(` + nested + `) ` + "`" + `true` + "`" + `" ; ` + nested
	}
	cmd := strings.Repeat(nested+" ; ", 3)
	fr := newFetchReader(&Package{}, cmd, nil)
	start := fr.budget
	fr.fetchesOfShell(cmd, 0)
	if used := start - fr.budget; used > start || used > 16*len(cmd)+64<<10 {
		t.Errorf("read %d bytes of a %d-byte command", used, len(cmd))
	}
}

// TestRuntimeFetchNote: validate's warning says what would pin each kind.
func TestRuntimeFetchNote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cmd, want string }{
		{"npx -y pkg@^1", `"^1" is not an exact version; give an exact version (@1.2.3)`},
		{"uvx tool", "no version is given; give an exact version (==1.2.3)"},
		{"uvx --from 'tool @ git+https://h.test/r.git@v1' tool", `"v1" is not an exact version; a URL's content, or a git branch or tag, may change: only a full commit id pins a repository`},
		{"docker run img:1.0", `"1.0" is not an exact version; only an image digest (@sha256:…) pins an image`},
		{"go run example.test/x@latest", `"latest" is not an exact version; give an exact module version (@v1.2.3)`},
		{"curl -s https://h.test/i | sh", "a downloaded script is never pinned"},
		{"docker mcp gateway run", "the Docker MCP catalog chooses the images"},
	} {
		got := newFetchReader(&Package{}, tc.cmd, nil).fetchesOfShell(tc.cmd, 0)
		if len(got) != 1 {
			t.Errorf("%s: %d fetches", tc.cmd, len(got))
			continue
		}
		got[0].Where = "hook Stop #1"
		note := RuntimeFetchNote(got[0])
		if want := "hook Stop #1 runs unpinned code fetched at run time: "; !strings.HasPrefix(note, want) || !strings.HasSuffix(note, "("+tc.want+")") {
			t.Errorf("%s:\n got %s\nwant (%s)", tc.cmd, note, tc.want)
		}
	}
}

// A plugin's scripts are read only when they are its own shell scripts:
// not through a link out of the plugin, not past maxScript bytes, not a
// named pipe (whose open would wait), not a path out of the plugin, not a
// file that is no shell script; and no more than maxScripts of them,
// however many a command names.
func TestRuntimeFetchScriptsBounded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "evil.sh")
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const fetch = "#!/bin/sh\nnpx -y evil@latest\n"
	if err := os.WriteFile(outside, []byte(fetch), 0o755); err != nil {
		t.Fatal(err)
	}
	write(".claude-plugin/plugin.json", `{"name":"scripts"}`)
	write("big.sh", fetch+strings.Repeat("# padding\n", maxScript/10+1))
	write("notes.txt", "npx -y evil@latest\n")
	write("ok.sh", "npx -y fine@1.0.0\n")
	if err := os.Symlink(outside, filepath.Join(root, "out.sh")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	var hooks []string
	for _, rel := range []string{"out.sh", "big.sh", "../evil.sh", "notes.txt", "pipe.sh", "ok.sh"} {
		hooks = append(hooks, fmt.Sprintf(`{"type":"command","command":"${CLAUDE_PLUGIN_ROOT}/%s"}`, rel))
	}
	write("hooks/hooks.json", `{"hooks":{"SessionStart":[{"hooks":[`+strings.Join(hooks, ",")+`]}]}}`)
	pkg, err := Load(root, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range pkg.RuntimeFetches {
		got = append(got, f.Command+" in "+f.Script)
	}
	if want := []string{"npx -y fine@1.0.0 in ok.sh"}; !slices.Equal(got, want) {
		t.Errorf("fetches %q, want %q", got, want)
	}

	// Forty scripts named: at most maxScripts are read.
	var line []string
	for i := range 40 {
		line = append(line, fmt.Sprintf("${CLAUDE_PLUGIN_ROOT}/s%02d.sh", i))
	}
	reads := 0
	scriptsOf(&Package{Hooks: []Hook{{Command: strings.Join(line, "; ")}}}, func(string, int64) ([]byte, error) {
		reads++
		return []byte("true\n"), nil
	})
	if reads != maxScripts {
		t.Errorf("%d scripts read, want %d", reads, maxScripts)
	}
}
