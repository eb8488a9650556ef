package manifest

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/mod/semver"

	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/secrets"
)

// Run-time fetches (SPEC §17): a plugin pinned to a commit may still run
// code that is fetched fresh whenever it runs — `npx -y pkg@latest` in an
// MCP server, `uvx tool` in a hook, `curl … | sh`. The inventory lists
// every one, with the package and whether it is pinned, so the review can
// say so and a mirror's policy can refuse it. This file is the one table
// of runners and the reader of commands: install's inventory and
// `reasonix plugin validate` (which warns) both get their list here.

// Kinds of run-time fetches.
const (
	// FetchCode is code fetched and run: a package, an image, a module,
	// a downloaded script.
	FetchCode = "code"
	// FetchRemote is a remote MCP server (http or sse): a service the
	// agent talks to, not code that runs here.
	FetchRemote = "remote"
)

// RuntimeFetch is one thing a hook, MCP server, LSP server or runtime
// fetches when it runs.
type RuntimeFetch struct {
	// Where says what runs it: "hook PreToolUse #1" (the event and the
	// hook's number among that event's, from 1), "mcpServer NAME",
	// "lspServer NAME", "runtime".
	Where string `json:"where"`
	Kind  string `json:"kind"` // FetchCode or FetchRemote
	// Runner is the table's name for how it is fetched ("npx", "uvx",
	// "docker run", "curl | sh"); "" for a remote server.
	Runner string `json:"runner,omitempty"`
	// Package is what is fetched: an npm or PyPI package, an image, a Go
	// module, a script's URL, a remote server's URL; masked.
	Package string `json:"package,omitempty"`
	// Version is the version, tag, range or digest asked for, as written
	// ("" when none is).
	Version string `json:"version,omitempty"`
	// Pinned: an exact version (npm, Go), ==x.y.z (Python), an image
	// digest, a git commit; a piped download never is.
	Pinned bool `json:"pinned"`
	// Command is the command that fetches it, masked as every command
	// shown is.
	Command string `json:"command,omitempty"`
	// Script is the plugin's own shell script the command is a line of,
	// when the hook or server launches one (${CLAUDE_PLUGIN_ROOT}/REL):
	// REL; "" when the declaration itself fetches.
	Script string `json:"script,omitempty"`

	// file is the package file that declares it (validate names it).
	file string
}

// Unpinned reports code fetched at run time whose content the plugin's
// commit does not fix.
func (f RuntimeFetch) Unpinned() bool { return f.Kind == FetchCode && !f.Pinned }

// Describe is the fetch in one line for a review: its command and where
// it runs ("npx -y @scope/pkg@latest (hook PreToolUse #1)").
func (f RuntimeFetch) Describe() string {
	what := f.Command
	if f.Kind == FetchRemote {
		what = "remote service " + f.Package
	}
	if f.Script != "" {
		return what + " (" + f.Where + ", in " + f.Script + ")"
	}
	return what + " (" + f.Where + ")"
}

// Ecosystems: how a runner's package spec is read and what pins it.
const (
	ecoNPM   = "npm"   // name[@version]; pinned by an exact version
	ecoPyPI  = "pypi"  // name[==version|@version]; pinned by ==
	ecoImage = "image" // [registry/]name[:tag][@sha256:…]; pinned by the digest
	ecoGo    = "go"    // module@version; pinned by an exact semantic version
	ecoMCP   = "docker-mcp"
)

// runner is one row of the table: a way to run code fetched at run time.
type runner struct {
	name string
	// invoked are the program and subcommand words that start it
	// ({"npm", "exec"}); the program is matched by its base name.
	invoked [][]string
	eco     string
	// values are the options that take a value (the next word, or after
	// "="), packages those whose value is the package (then the first
	// operand is the command to run), extras those whose value is another
	// package fetched beside it (uvx --with), scripts those whose value is
	// a shell command line it runs (npm exec -c).
	values, packages, extras, scripts []string
}

// runners is the table (SPEC §17): every form Reasonix recognizes.
var runners = []runner{
	{name: "npx", invoked: [][]string{{"npx"}}, eco: ecoNPM,
		values:   []string{"--registry", "--cache", "--userconfig", "--prefix", "-w", "--workspace", "--node-options", "--loglevel", "--shell"},
		packages: []string{"-p", "--package"}, scripts: []string{"-c", "--call"}},
	{name: "npm exec", invoked: [][]string{{"npm", "exec"}, {"npm", "x"}}, eco: ecoNPM,
		values:   []string{"--registry", "--cache", "--userconfig", "--prefix", "-w", "--workspace", "--node-options", "--loglevel", "--shell"},
		packages: []string{"-p", "--package"}, scripts: []string{"-c", "--call"}},
	{name: "bunx", invoked: [][]string{{"bunx"}, {"bun", "x"}}, eco: ecoNPM,
		values: []string{"--registry", "--cwd"}, packages: []string{"-p", "--package"}},
	{name: "pnpm dlx", invoked: [][]string{{"pnpm", "dlx"}, {"pnpx"}}, eco: ecoNPM,
		values: []string{"--registry", "--dir", "-C", "--reporter"}, packages: []string{"--package"}},
	{name: "yarn dlx", invoked: [][]string{{"yarn", "dlx"}}, eco: ecoNPM,
		values: []string{"--cwd"}, packages: []string{"-p", "--package"}},
	{name: "uvx", invoked: [][]string{{"uvx"}, {"uv", "tool", "run"}, {"uv", "tool", "uvx"}}, eco: ecoPyPI,
		values: []string{"--python", "-p", "--index", "--index-url", "-i", "--extra-index-url", "--default-index", "--with-editable",
			"--with-requirements", "--constraints", "-c", "--overrides", "--build-constraints", "-b", "--directory", "--project",
			"--cache-dir", "--config-file", "--color", "--python-preference", "--index-strategy", "--keyring-provider",
			"--resolution", "--prerelease", "--exclude-newer", "--refresh-package", "--reinstall-package", "--upgrade-package",
			"--link-mode", "--config-setting", "-C", "--env-file", "--allow-insecure-host", "--find-links", "-f"},
		packages: []string{"--from"}, extras: []string{"--with", "-w"}},
	{name: "pipx run", invoked: [][]string{{"pipx", "run"}}, eco: ecoPyPI,
		values: []string{"--python", "--pip-args", "--index-url", "-i", "--backend", "--fetch-missing-python"}, packages: []string{"--spec"}},
	{name: "docker run", invoked: [][]string{{"docker", "run"}, {"docker", "container", "run"}}, eco: ecoImage, values: containerValues},
	{name: "podman run", invoked: [][]string{{"podman", "run"}, {"podman", "container", "run"}}, eco: ecoImage, values: containerValues},
	{name: "docker mcp", invoked: [][]string{{"docker", "mcp"}}, eco: ecoMCP},
	{name: "go run", invoked: [][]string{{"go", "run"}}, eco: ecoGo,
		values: []string{"-C", "-exec", "-mod", "-modfile", "-tags", "-ldflags", "-gcflags", "-asmflags", "-o", "-p", "-overlay",
			"-pgo", "-pkgdir", "-toolexec", "-covermode", "-coverpkg", "-buildmode", "-compiler", "-gccgoflags", "-installsuffix"}},
}

// containerValues are `docker run`'s and `podman run`'s options that take
// a value: the image is the first word after the options.
var containerValues = []string{
	"-e", "--env", "--env-file", "-v", "--volume", "--volumes-from", "--mount", "--name", "-p", "--publish", "--expose",
	"--network", "--net", "--network-alias", "-w", "--workdir", "-u", "--user", "--entrypoint", "-l", "--label", "--label-file",
	"--platform", "--pull", "-m", "--memory", "--memory-swap", "--memory-reservation", "--cpus", "--cpu-shares", "-c",
	"--cpuset-cpus", "--cpuset-mems", "--add-host", "--dns", "--dns-search", "--dns-option", "-h", "--hostname", "--device",
	"--cap-add", "--cap-drop", "--security-opt", "--tmpfs", "--ulimit", "--restart", "--log-driver", "--log-opt", "--gpus",
	"--ipc", "--pid", "--shm-size", "--stop-signal", "--stop-timeout", "--runtime", "--cidfile", "--group-add", "--link",
	"--userns", "--uts", "-a", "--attach", "--cgroupns", "--cgroup-parent", "--ip", "--ip6", "--mac-address", "--annotation",
	"--health-cmd", "--health-interval", "--health-retries", "--health-timeout", "--health-start-period", "--isolation",
	"--blkio-weight", "--device-read-bps", "--device-write-bps", "--kernel-memory", "--oom-score-adj", "--pids-limit",
	"--storage-opt", "--sysctl", "--volume-driver", "--detach-keys", "--domainname", "--init-path", "--arch", "--os",
	"--secret", "--requires", "--pod", "--tz", "--umask", "--hooks-dir", "--variant", "--authfile", "--creds", "--decryption-key",
	"--env-merge", "--gidmap", "--uidmap", "--subuidname", "--subgidname", "--chrootdirs", "--sdnotify", "--seccomp-policy",
	"--personality", "--preserve-fds", "--passwd-entry", "--group-entry", "--image-volume", "--cgroups", "--cgroup-conf",
}

// Programs around a run-time fetch.
var (
	// shells run a script: from stdin (a sink of a pipeline), from -c's
	// argument, or from a file (a process substitution).
	shells = []string{"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "busybox"}
	// downloaders print what they fetch (into a pipe).
	downloaders = []string{"curl", "wget", "irm", "iwr", "invoke-webrequest", "invoke-restmethod"}
	// powerShellEval runs the text it is given, as a shell runs stdin.
	powerShellEval = []string{"iex", "invoke-expression"}
	// interpreters run a program read from stdin when given none.
	interpreters = []string{"python", "python3", "perl", "ruby", "node"}
)

// program is the base name of a command's first word, as the table names
// programs: /usr/bin/npx, ${CLAUDE_PLUGIN_ROOT}/node_modules/.bin/npx and
// npx.cmd are all npx.
func program(word string) string {
	word = word[strings.LastIndexAny(word, `/\`)+1:]
	word = strings.ToLower(word)
	for _, ext := range []string{".exe", ".cmd", ".bat", ".ps1"} {
		word = strings.TrimSuffix(word, ext)
	}
	return word
}

// RuntimeFetchesOf lists what p's hooks, MCP servers, LSP servers and
// runtime fetch when they run, in that order; nil when nothing does. It
// reads the package as shown (its commands already masked).
func RuntimeFetchesOf(p *Package) []RuntimeFetch {
	var out []RuntimeFetch
	add := func(where, file string, found []RuntimeFetch) {
		for _, f := range found {
			f.Where, f.file, f.Package, f.Command = where, file, secrets.Mask(f.Package), secrets.Mask(f.Command)
			if f.Script != "" {
				f.file = f.Script
			}
			out = append(out, f)
		}
	}
	nth := map[string]int{}
	for _, h := range p.Hooks {
		if h.Command == "" {
			continue
		}
		nth[h.Event]++
		where := fmt.Sprintf("hook %s #%d", h.Event, nth[h.Event])
		if h.Form == HookExec {
			add(where, h.Source, newFetchReader(p, h.Command, h.Args).fetchesOfArgv(append([]string{h.Command}, h.Args...), 0))
		} else {
			add(where, h.Source, newFetchReader(p, h.Command, nil).fetchesOfShell(h.Command, 0))
		}
	}
	for _, s := range p.MCPServers {
		where := "mcpServer " + s.Name
		if s.Transport != "stdio" {
			out = append(out, RuntimeFetch{Where: where, Kind: FetchRemote, Package: secrets.Mask(s.URL), file: s.Source})
			continue
		}
		add(where, s.Source, newFetchReader(p, s.Command, s.Args).fetchesOfLaunch(s.Command, s.Args))
	}
	for _, s := range p.LSPServers {
		add("lspServer "+s.Name, s.Source, newFetchReader(p, s.Command, s.Args).fetchesOfLaunch(s.Command, s.Args))
	}
	if r := p.Runtime; r != nil {
		add("runtime", p.ManifestPath, newFetchReader(p, r.Command, r.Args).fetchesOfLaunch(r.Command, r.Args))
	}
	return out
}

// fetchReader reads one command line. Substitutions and `sh -c` scripts
// are read again at each level they nest, so what one command may make it
// read is bounded (budget bytes, a multiple of its own length, and each of
// the plugin's scripts it runs once): a hostile manifest cannot make the
// inventory slow.
type fetchReader struct {
	budget  int
	scripts map[string]string // the package's (Package.scripts)
	read    map[string]bool   // the scripts this command ran, read already
}

func newFetchReader(p *Package, command string, args []string) *fetchReader {
	n := len(command)
	for _, a := range args {
		n += len(a) + 1
	}
	return &fetchReader{budget: 16*n + 64<<10, scripts: p.scripts, read: map[string]bool{}}
}

// spend takes n bytes of the budget, reporting whether there were.
func (fr *fetchReader) spend(n int) bool {
	if fr.budget < n {
		return false
	}
	fr.budget -= n
	return true
}

// fetchesOfLaunch reads a server's command and arguments, started without
// a shell. A command line written whole into "command" is read as one.
func (fr *fetchReader) fetchesOfLaunch(command string, args []string) []RuntimeFetch {
	if len(args) == 0 && strings.ContainsAny(strings.TrimSpace(command), " \t") {
		return fr.fetchesOfShell(command, 0)
	}
	return fr.fetchesOfArgv(append([]string{command}, args...), 0)
}

// fetchesOfShell reads shell text.
func (fr *fetchReader) fetchesOfShell(script string, depth int) []RuntimeFetch {
	if depth > maxShellDepth || !fr.spend(len(script)) {
		return nil
	}
	var out []RuntimeFetch
	for _, pipe := range splitShell(script) {
		out = append(out, fr.fetchesOfPipeline(pipe, depth)...)
	}
	return out
}

// fetchesOfArgv reads a command started without a shell.
func (fr *fetchReader) fetchesOfArgv(argv []string, depth int) []RuntimeFetch {
	cmd := make(shellCommand, len(argv))
	for i, a := range argv {
		cmd[i] = shellWord{text: a}
	}
	return fr.fetchesOfPipeline(shellPipeline{cmd}, depth)
}

// fetchesOfPipeline reads one pipeline: each command, what its
// substitutions run, and a download piped into a shell.
func (fr *fetchReader) fetchesOfPipeline(pipe shellPipeline, depth int) []RuntimeFetch {
	var out []RuntimeFetch
	download := -1 // the first command of the pipeline that downloads
	for i, cmd := range pipe {
		for _, w := range cmd {
			for _, sub := range w.subs {
				out = append(out, fr.fetchesOfShell(sub, depth+1)...)
			}
			if w.proc != "" {
				out = append(out, fr.fetchesOfShell(w.proc, depth+1)...)
			}
		}
		argv := stripPrefixes(cmd)
		if len(argv) == 0 {
			continue
		}
		prog := program(argv[0].text)
		if download < 0 && slices.Contains(downloaders, prog) {
			download = i
			continue
		}
		if download >= 0 && readsStdin(prog, argv) {
			out = append(out, pipedDownload(pipe[download:i+1], pipe[download], prog))
			download = -1
			continue
		}
		out = append(out, fr.fetchesOfCommand(argv, depth)...)
	}
	return out
}

// stripPrefixes drops what comes before the program a simple command
// runs: assignments (FOO=1), keywords, and the wrappers that run the rest
// as a command (env, sudo, exec, nohup, time, nice, timeout, command).
func stripPrefixes(cmd shellCommand) shellCommand {
	for len(cmd) > 0 {
		w := cmd[0].text
		switch prog := program(w); {
		case isAssignment(w):
			cmd = cmd[1:]
		case slices.Contains([]string{"!", "{", "}", "if", "then", "else", "elif", "do", "while", "until", "exec", "nohup", "time", "builtin"}, w):
			cmd = cmd[1:]
		case prog == "command":
			if len(cmd) > 1 && (cmd[1].text == "-v" || cmd[1].text == "-V") {
				return nil // looks a program up, runs nothing
			}
			cmd = cmd[1:]
		case prog == "env":
			cmd = skipOptions(cmd[1:], []string{"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, true)
		case prog == "sudo" || prog == "doas":
			cmd = skipOptions(cmd[1:], []string{"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-U", "--other-user"}, true)
		case prog == "nice" || prog == "ionice" || prog == "stdbuf":
			cmd = skipOptions(cmd[1:], []string{"-n", "--adjustment", "-c", "--class", "-i", "-o", "-e"}, false)
		case prog == "timeout":
			cmd = skipOptions(cmd[1:], []string{"-s", "--signal", "-k", "--kill-after"}, false)
			if len(cmd) > 0 {
				cmd = cmd[1:] // the duration
			}
		default:
			return cmd
		}
	}
	return cmd
}

var assignment = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*\+?=`)

func isAssignment(w string) bool { return assignment.MatchString(w) }

// skipOptions drops leading options (values: those taking a value) and,
// when assignments, NAME=VALUE words (env's).
func skipOptions(cmd shellCommand, values []string, assignments bool) shellCommand {
	for len(cmd) > 0 {
		w := cmd[0].text
		switch {
		case w == "--":
			return cmd[1:]
		case assignments && isAssignment(w):
			cmd = cmd[1:]
		case strings.HasPrefix(w, "-") && len(w) > 1:
			cmd = cmd[1:]
			if slices.Contains(values, w) && len(cmd) > 0 {
				cmd = cmd[1:]
			}
		default:
			return cmd
		}
	}
	return cmd
}

// readsStdin reports a command that runs the text piped into it: a shell
// given no script (sh, bash -s, sudo -E bash -), an interpreter given no
// program (python3 -), or PowerShell's iex.
func readsStdin(prog string, argv shellCommand) bool {
	if slices.Contains(powerShellEval, prog) {
		return true
	}
	if slices.Contains(interpreters, prog) {
		// python3, python3 -, node -: a program from stdin; -c, -e, -m or
		// a file name: stdin is data.
		return !slices.ContainsFunc(argv[1:], func(w shellWord) bool {
			return w.text != "-" && (!strings.HasPrefix(w.text, "-") || strings.ContainsAny(w.text, "cemp"))
		})
	}
	if !slices.Contains(shells, prog) {
		return false
	}
	for _, w := range argv[1:] {
		switch t := w.text; {
		case t == "-" || t == "--" || t == "-s" || strings.HasPrefix(t, "--"):
		case strings.HasPrefix(t, "-") && !strings.Contains(t, "c"):
		case strings.HasPrefix(t, "-"):
			return false // -c: the script is an argument
		default:
			return false // a script file
		}
	}
	return true
}

// pipedDownload is a download piped into a shell: never pinned, whatever
// it names.
func pipedDownload(pipe shellPipeline, dl shellCommand, shell string) RuntimeFetch {
	argv := stripPrefixes(dl)
	f := RuntimeFetch{Kind: FetchCode, Runner: program(argv[0].text) + " | " + shell, Command: pipelineText(pipe)}
	for _, w := range argv[1:] {
		if strings.Contains(w.text, "://") {
			f.Package = w.text
			break
		}
	}
	return f
}

// fetchesOfCommand reads one simple command, its prefixes stripped: a
// runner of the table, a shell or wrapper whose script is read in turn,
// or code whose text a download gives.
func (fr *fetchReader) fetchesOfCommand(argv shellCommand, depth int) []RuntimeFetch {
	if found, ok := fr.fetchesOfScript(argv[0].text, depth); ok {
		return found
	}
	prog := program(argv[0].text)
	// What a download prints, run as a command: $(curl …), `curl …`.
	if fr.downloadsIn(argv[0], depth) || (prog == "eval" && slices.ContainsFunc(argv[1:], func(w shellWord) bool { return fr.downloadsIn(w, depth) })) {
		return []RuntimeFetch{executedDownload(argv)}
	}
	switch {
	case prog == "eval":
		return fr.fetchesOfShell(wordsText(argv[1:]), depth+1)
	case slices.Contains(shells, prog) || prog == "source" || prog == ".":
		return fr.fetchesOfShellCall(prog, argv, depth)
	case prog == "cmd":
		// cmd /c npx …: Windows' launcher of a command line.
		for i, w := range argv[1:] {
			if t := strings.ToLower(w.text); t == "/c" || t == "/k" || t == "/s" {
				if t != "/s" {
					return fr.fetchesOfShell(wordsText(argv[i+2:]), depth+1)
				}
			}
		}
		return nil
	case prog == "powershell" || prog == "pwsh":
		for i, w := range argv[1:] {
			if t := strings.ToLower(w.text); t == "-command" || t == "-c" {
				return fr.fetchesOfShell(wordsText(argv[i+2:]), depth+1)
			}
		}
		return nil
	}
	for _, r := range runners {
		if rest, ok := r.match(argv); ok {
			return r.read(fr, rest, wordsText(argv), depth)
		}
	}
	return nil
}

// fetchesOfShellCall reads a shell started with a script: -c's argument,
// or a script file that is a process substitution (bash <(curl …)).
func (fr *fetchReader) fetchesOfShellCall(prog string, argv shellCommand, depth int) []RuntimeFetch {
	hasC := false
	for i := 1; i < len(argv); i++ {
		t := argv[i].text
		switch {
		case prog != "source" && prog != "." && strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && len(t) > 1:
			if strings.Contains(t, "c") {
				hasC = true
			} else if t == "-o" || t == "+o" {
				i++ // set -o NAME
			}
		case strings.HasPrefix(t, "--"):
		default:
			if argv[i].proc != "" && fr.downloads(argv[i].proc, depth) {
				return []RuntimeFetch{executedDownload(argv)}
			}
			if hasC {
				if slices.ContainsFunc(argv[i].subs, func(s string) bool { return fr.downloads(s, depth) }) {
					return []RuntimeFetch{executedDownload(argv)} // sh -c "$(curl …)"
				}
				return fr.fetchesOfShell(t, depth+1)
			}
			found, _ := fr.fetchesOfScript(t, depth) // the plugin's own, or not read
			return found
		}
	}
	return nil
}

// Plugin scripts (SPEC §17): a hook or server that launches the plugin's
// own shell script, `${CLAUDE_PLUGIN_ROOT}/hooks/setup.sh` or `bash
// ${CLAUDE_PLUGIN_ROOT}/scripts/start.sh`, fetches what that script's lines
// fetch. The package's scripts are read once, at load (scriptsOf: a shell
// script, at most maxScript bytes, at most maxScripts of them), and a
// command's reader reads each it runs once.
const (
	maxScript  = 64 << 10
	maxScripts = 32
)

var (
	// pluginFileWord is a word that names a file of the plugin,
	// ${CLAUDE_PLUGIN_ROOT}/REL or $CLAUDE_PLUGIN_ROOT/REL, REL its group;
	// pluginFileIn finds such names in a command line (up to a space,
	// quote or shell operator).
	pluginFileWord = lazyregexp.New(`^\$(?:\{CLAUDE_PLUGIN_ROOT\}|CLAUDE_PLUGIN_ROOT)/(.+)$`)
	pluginFileIn   = lazyregexp.New(`\$(?:\{CLAUDE_PLUGIN_ROOT\}|CLAUDE_PLUGIN_ROOT)/([^\s"'\x60;|&()<>$]+)`)
	// shellShebang is a script's first line naming a shell.
	shellShebang = lazyregexp.New(`^#!\s*\S*?(?:/|env\s+(?:-\S+\s+)*)(?:ba|z|da|k|a|mk)?sh(?:\s|$)`)
)

// fetchesOfScript reads the plugin script word names, when it is one the
// package holds, once per command; ok reports that word is one.
func (fr *fetchReader) fetchesOfScript(word string, depth int) (found []RuntimeFetch, ok bool) {
	m := pluginFileWord.FindStringSubmatch(word)
	if m == nil {
		return nil, false
	}
	rel := path.Clean(m[1])
	text, ok := fr.scripts[rel]
	if !ok {
		return nil, false
	}
	if fr.read[rel] {
		return nil, true
	}
	fr.read[rel] = true
	fr.budget += len(text)
	found = fr.fetchesOfShell(text, depth+1)
	for i := range found {
		if found[i].Script == "" {
			found[i].Script = rel
		}
	}
	return found, true
}

// scriptsOf reads the shell scripts of p that its hooks, servers and
// runtime name (${CLAUDE_PLUGIN_ROOT}/REL), with read (the package's
// confined reader): a regular file of the plugin, at most maxScript
// bytes, whose name or first line says it is a shell script. What cannot
// be read is left out: the command is then read alone, as before.
func scriptsOf(p *Package, read func(rel string, limit int64) ([]byte, error)) map[string]string {
	var lines []string
	for _, h := range p.Hooks {
		lines = append(append(lines, h.Command), h.Args...)
	}
	for _, s := range p.MCPServers {
		lines = append(append(lines, s.Command), s.Args...)
	}
	for _, s := range p.LSPServers {
		lines = append(append(lines, s.Command), s.Args...)
	}
	if r := p.Runtime; r != nil {
		lines = append(append(lines, r.Command), r.Args...)
	}
	out := map[string]string{}
	tried := map[string]bool{}
	// Scripts naming scripts: read level by level, within maxScripts.
	for len(lines) > 0 && len(tried) < maxScripts {
		var next []string
		for _, line := range lines {
			for _, m := range pluginFileIn.FindAllStringSubmatch(line, -1) {
				rel := path.Clean(m[1])
				if tried[rel] || len(tried) >= maxScripts {
					continue
				}
				tried[rel] = true
				data, err := read(rel, maxScript)
				if err != nil || !isShellScript(rel, data) {
					continue
				}
				out[rel] = string(data)
				next = append(next, string(data))
			}
		}
		lines = next
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// isShellScript: a text file named as a shell script, or whose first line
// runs a shell.
func isShellScript(rel string, data []byte) bool {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	switch path.Ext(rel) {
	case ".sh", ".bash", ".zsh", ".ksh", ".dash":
		return true
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	return shellShebang.MatchString(string(first))
}

// downloadsIn reports a word holding a substitution that downloads.
func (fr *fetchReader) downloadsIn(w shellWord, depth int) bool {
	return slices.ContainsFunc(w.subs, func(s string) bool { return fr.downloads(s, depth) })
}

// downloads reports a script whose first program downloads.
func (fr *fetchReader) downloads(script string, depth int) bool {
	if depth > maxShellDepth || !fr.spend(len(script)) {
		return false
	}
	for _, pipe := range splitShell(script) {
		for _, cmd := range pipe {
			if argv := stripPrefixes(cmd); len(argv) > 0 && slices.Contains(downloaders, program(argv[0].text)) {
				return true
			}
		}
	}
	return false
}

// executedDownload is a command that runs what a download prints: never
// pinned.
func executedDownload(argv shellCommand) RuntimeFetch {
	f := RuntimeFetch{Kind: FetchCode, Command: wordsText(argv)}
	text := f.Command
	// What runs it: the shell or eval, or, for $(curl …) as the program,
	// the command line it prints.
	runs := program(argv[0].text)
	if len(argv[0].subs) > 0 {
		runs = "exec"
	}
	f.Runner = "download | " + runs
	for _, d := range downloaders {
		if strings.Contains(strings.ToLower(text), d+" ") {
			f.Runner = d + " | " + runs
			break
		}
	}
	if i := strings.Index(text, "://"); i >= 0 {
		start := strings.LastIndexAny(text[:i], " \t\"'(") + 1
		end := i + strings.IndexAny(text[i:]+" ", " \t\"')")
		f.Package = text[start:end]
	}
	return f
}

// wordsText is a command's words as one command line.
func wordsText(words shellCommand) string {
	parts := make([]string, len(words))
	for i, w := range words {
		if w.proc != "" || len(w.subs) > 0 {
			parts[i] = w.text // as written: quoting it would change what it says
			if strings.ContainsAny(w.text, " \t") && len(w.subs) > 0 {
				parts[i] = `"` + w.text + `"`
			}
			continue
		}
		parts[i] = shellQuote(w.text)
	}
	return strings.Join(parts, " ")
}

// pipelineText is a pipeline as one command line.
func pipelineText(pipe shellPipeline) string {
	parts := make([]string, len(pipe))
	for i, c := range pipe {
		parts[i] = wordsText(c)
	}
	return strings.Join(parts, " | ")
}

// match reports whether argv starts the runner, and the words after its
// program and subcommand.
func (r *runner) match(argv shellCommand) (shellCommand, bool) {
	for _, inv := range r.invoked {
		if len(argv) < len(inv) || program(argv[0].text) != inv[0] {
			continue
		}
		if slices.Equal(textsOf(argv[1:len(inv)]), inv[1:]) {
			return argv[len(inv):], true
		}
	}
	return nil, false
}

func textsOf(words shellCommand) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.text
	}
	return out
}

// read reads a runner's options and operands: the packages it fetches.
func (r *runner) read(fr *fetchReader, args shellCommand, command string, depth int) []RuntimeFetch {
	var specs, extras []string
	operand := ""
	takes := func(list []string, flag string) bool { return slices.Contains(list, flag) }
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			if i+1 < len(args) {
				operand = args[i+1].text
			}
			break
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			operand = t
			break
		}
		flag, value, inline := strings.Cut(t, "=")
		if !inline && !strings.HasPrefix(t, "--") && len(t) > 2 && r.eco == ecoImage {
			// -eFOO=1, -p8080:80; or a cluster of switches (-it)
			if takes(r.values, t[:2]) {
				continue
			}
			flag = "-" + t[len(t)-1:]
		}
		isValue := takes(r.values, flag) || takes(r.packages, flag) || takes(r.extras, flag) || takes(r.scripts, flag)
		if isValue && !inline {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i].text
		}
		switch {
		case takes(r.packages, flag):
			specs = append(specs, value)
		case takes(r.extras, flag):
			extras = append(extras, value)
		case takes(r.scripts, flag):
			return append(r.fetched(specs, command), fr.fetchesOfShell(value, depth+1)...)
		}
	}
	if r.eco == ecoMCP {
		return []RuntimeFetch{{Kind: FetchCode, Runner: r.name, Package: "Docker MCP catalog", Command: command}}
	}
	if len(specs) == 0 && operand != "" {
		specs = []string{operand}
	}
	return r.fetched(append(specs, extras...), command)
}

// fetched judges each package spec by the runner's ecosystem; a spec that
// names something local fetches nothing.
func (r *runner) fetched(specs []string, command string) []RuntimeFetch {
	var out []RuntimeFetch
	for _, spec := range specs {
		if spec == "" || isLocal(spec, r.eco) {
			continue
		}
		pkg, version, pinned := judge(r.eco, spec)
		out = append(out, RuntimeFetch{Kind: FetchCode, Runner: r.name, Package: pkg, Version: version, Pinned: pinned, Command: command})
	}
	return out
}

// isLocal reports a spec that names the plugin's own files or the
// machine's: a path (./x, /x, ~/x, ${CLAUDE_PLUGIN_ROOT}/x), file:, or, for
// go run, a .go file or a package path without a version.
func isLocal(spec, eco string) bool {
	if strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") || strings.HasPrefix(spec, "~") ||
		strings.HasPrefix(spec, "$") || strings.HasPrefix(spec, "file:") || strings.HasPrefix(spec, `\`) ||
		len(spec) > 2 && spec[1] == ':' && (spec[2] == '\\' || spec[2] == '/') {
		return true
	}
	if eco == ecoGo {
		return !strings.Contains(spec, "@")
	}
	return false
}

var (
	// exactNPM is an exact npm version (semver, an optional "v" or "=").
	exactNPM = lazyregexp.New(`^[=v]?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	// exactPython is a PEP 440 version without a wildcard.
	exactPython = lazyregexp.New(`^v?\d+(\.\d+)*((a|b|rc|\.post|\.dev|post|dev)\d*)*(\+[0-9A-Za-z.]+)?$`)
	sha256Ref   = lazyregexp.New(`@sha256:[0-9a-f]{64}$`)
	commitRef   = lazyregexp.New(`^[0-9a-f]{40}$`)
)

// judge splits a spec into package and version and says whether the
// version pins it.
func judge(eco, spec string) (pkg, version string, pinned bool) {
	// PEP 508's direct reference, "name[extras] @ URL": what the URL holds.
	if name, url, ok := strings.Cut(spec, "@"); eco == ecoPyPI && ok && strings.Contains(url, "://") {
		if j := strings.IndexByte(name, '['); j >= 0 {
			name = name[:j]
		}
		repo, ref, _ := gitSpec(strings.TrimSpace(url))
		return strings.TrimSpace(name) + " @ " + repo, ref, commitRef.MatchString(ref)
	}
	// A git repository at a ref: pinned only by a full commit id.
	if g, ref, ok := gitSpec(spec); ok {
		return g, ref, commitRef.MatchString(ref)
	}
	switch eco {
	case ecoNPM:
		at := strings.LastIndexByte(spec, '@')
		if at <= 0 { // none, or the scope's
			return spec, "", false
		}
		pkg, version = spec[:at], spec[at+1:]
		return pkg, version, exactNPM.MatchString(version)
	case ecoPyPI:
		name := spec
		if i := strings.IndexAny(spec, "=<>!~@;"); i >= 0 {
			name, version = spec[:i], strings.TrimSpace(spec[i:])
		}
		if j := strings.IndexByte(name, '['); j >= 0 { // extras
			name = name[:j]
		}
		name = strings.TrimSpace(name)
		switch {
		case strings.HasPrefix(version, "==="):
			v := strings.TrimPrefix(version, "===")
			return name, v, v != "" && !strings.ContainsAny(v, "*,;")
		case strings.HasPrefix(version, "=="):
			v := strings.TrimPrefix(version, "==")
			return name, v, exactPython.MatchString(v)
		case strings.HasPrefix(version, "@"):
			v := strings.TrimSpace(strings.TrimPrefix(version, "@"))
			return name, v, exactPython.MatchString(v)
		}
		return name, version, false
	case ecoImage:
		if sha256Ref.MatchString(spec) {
			at := strings.LastIndex(spec, "@")
			return spec[:at], spec[at+1:], true
		}
		name, tag := spec, ""
		if i := strings.LastIndexByte(spec, ':'); i > strings.LastIndexByte(spec, '/') {
			name, tag = spec[:i], spec[i+1:]
		}
		return name, tag, false
	case ecoGo:
		mod, v, _ := strings.Cut(spec, "@")
		return mod, v, semver.IsValid(v) && semver.Canonical(v) == strings.TrimSuffix(v, semver.Build(v))
	}
	return spec, "", false
}

// gitSpec reads a package spec that names a git repository
// (git+https://host/repo@ref, github:owner/repo#ref, https://…/repo.git#ref)
// into the repository and the ref.
func gitSpec(spec string) (repo, ref string, ok bool) {
	lower := strings.ToLower(spec)
	isGit := strings.HasPrefix(lower, "git+") || strings.HasPrefix(lower, "git://") || strings.HasPrefix(lower, "github:") ||
		strings.HasPrefix(lower, "gitlab:") || strings.HasPrefix(lower, "bitbucket:") ||
		strings.Contains(lower, "://") && strings.Contains(lower, ".git")
	if !isGit {
		if strings.Contains(lower, "://") {
			return spec, "", true // an archive's URL: what it serves may change
		}
		return "", "", false
	}
	if i := strings.LastIndexByte(spec, '#'); i >= 0 {
		return spec[:i], spec[i+1:], true
	}
	// git+https://host/repo@ref (pip's form): an @ after the path's start
	if scheme := strings.Index(spec, "://"); scheme >= 0 {
		rest := spec[scheme+3:]
		if slash := strings.IndexByte(rest, '/'); slash >= 0 {
			if at := strings.LastIndexByte(rest[slash:], '@'); at >= 0 {
				cut := scheme + 3 + slash + at
				return spec[:cut], spec[cut+1:], true
			}
		}
	}
	return spec, "", true
}

// RuntimeFetchNote says, in one line, why an unpinned run-time fetch is
// one: validate's warning, naming the command and what would pin it.
func RuntimeFetchNote(f RuntimeFetch) string {
	why := "no version is given"
	if f.Version != "" {
		why = fmt.Sprintf("%q is not an exact version", f.Version)
	}
	switch {
	case strings.Contains(f.Runner, "|"):
		why = "a downloaded script is never pinned"
	case f.Runner == "docker mcp":
		why = "the Docker MCP catalog chooses the images"
	case strings.Contains(f.Package, "://") || strings.Contains(f.Package, "github:"):
		why += "; a URL's content, or a git branch or tag, may change: only a full commit id pins a repository"
	case f.Runner == "docker run" || f.Runner == "podman run":
		why += "; only an image digest (@sha256:…) pins an image"
	case f.Runner == "go run":
		why += "; give an exact module version (@v1.2.3)"
	case f.Runner == "uvx" || f.Runner == "pipx run":
		why += "; give an exact version (==1.2.3)"
	default:
		why += "; give an exact version (@1.2.3)"
	}
	return fmt.Sprintf("%s runs unpinned code fetched at run time: %s (%s)", f.Where, f.Command, why)
}
