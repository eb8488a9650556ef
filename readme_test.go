//go:build unix

package plugind

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README is a tour a newcomer follows in one shell, so it is tested
// the same way: every ```sh block, in order, in ONE bash process with
// `set -euo pipefail`, at the root of a throwaway copy of the checkout (the
// README says "from the root of the repository"), where the only thing it
// may leave is ./reasonix, which its first command builds. HOME and TMPDIR
// point into the test's temporary directory, so every `mktemp -d` home and
// scratch folder of the README lands there; the network is loopback only
// (a network namespace of its own where the machine allows one, and dead
// proxies and GitHub URLs in any case), so the remote sections must use the
// fake GitHub they start.
//
// A block is left out only when the line before its fence is
// readmeSkipMarker, an HTML comment GitHub does not show: the test command
// (it would run this test again), the lines that change the reader's own
// shell startup files, and commands that need a team mirror.

const (
	readmeSkipMarker = "<!-- readme-test: skip -->"
	// readmeBudget bounds the README run once the packages it builds are
	// compiled (the warm-up in TestReadme pays for a cold build cache). A
	// run takes 15-50 s on a busy 2-core machine; the budget is only there
	// to end a README that hangs.
	readmeBudget = 3 * time.Minute
	// readmeBlockMark starts each block's output in the log, so a failure
	// can be pinned on its block.
	readmeBlockMark = "@@readme-test block "
	// readmeDeadAddr is a loopback port nothing listens on: the default
	// GitHub and the proxy of the README's shell, so a command that would
	// reach the internet fails on loopback instead.
	readmeDeadAddr = "http://127.0.0.1:9"
)

type readmeBlock struct {
	Line int    // line of the opening fence in README.md, from 1
	Text string // the block's lines, each ending in "\n"
	Skip bool   // preceded by readmeSkipMarker
}

// readmeBlocks returns README's ```sh blocks in order. Other fences
// (```yaml, bare ```) are prose and are passed over whole, so a "```sh"
// inside them is not a block.
func readmeBlocks(md string) ([]readmeBlock, error) {
	var blocks []readmeBlock
	var cur *readmeBlock
	inOther, prev := false, ""
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.HasPrefix(line, "```")
		switch {
		case cur != nil && fence:
			if strings.TrimSpace(line) != "```" {
				return nil, fmt.Errorf("README.md:%d: a fence inside the sh block of line %d", n, cur.Line)
			}
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.Text += line + "\n"
		case inOther:
			// Only a bare fence closes a block, as in Markdown.
			inOther = strings.TrimSpace(line) != "```"
		case fence && strings.TrimSpace(line) == "```sh":
			cur = &readmeBlock{Line: n, Skip: prev == readmeSkipMarker}
		case fence && prev == readmeSkipMarker:
			return nil, fmt.Errorf("README.md:%d: %s marks a block that is not ```sh", n, readmeSkipMarker)
		case fence:
			inOther = true
		case prev == readmeSkipMarker && strings.TrimSpace(line) != "":
			return nil, fmt.Errorf("README.md:%d: %s must come right before an ```sh fence", n-1, readmeSkipMarker)
		}
		if s := strings.TrimSpace(line); s != "" {
			prev = s
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("README.md:%d: the sh block is never closed", cur.Line)
	}
	if inOther {
		return nil, errors.New("README.md: a fenced block is never closed")
	}
	return blocks, nil
}

func TestReadmeBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		md      string
		want    []readmeBlock
		wantErr string
	}{
		{
			name: "blocks in order, skip marker, other fences ignored",
			md: "# t\n\n```sh\ngo build\n./x\n```\n\n" + readmeSkipMarker + "\n```sh\ngo test\n```\n" +
				"```yaml\n```sh\nnot: shell\n```\n```\nplain\n```\n```sh\necho 3\n```\n",
			want: []readmeBlock{
				{Line: 3, Text: "go build\n./x\n"},
				{Line: 9, Text: "go test\n", Skip: true},
				{Line: 19, Text: "echo 3\n"},
			},
		},
		{
			name: "a blank line between marker and fence still skips",
			md:   readmeSkipMarker + "\n\n```sh\nx\n```\n",
			want: []readmeBlock{{Line: 3, Text: "x\n", Skip: true}},
		},
		{
			name:    "marker before prose",
			md:      readmeSkipMarker + "\nsome text\n```sh\nx\n```\n",
			wantErr: "must come right before",
		},
		{name: "unclosed sh block", md: "```sh\nx\n", wantErr: "never closed"},
		{name: "unclosed other block", md: "```yaml\nx\n", wantErr: "never closed"},
		{name: "fence with info inside sh", md: "```sh\n```bash\n```\n", wantErr: "a fence inside"},
		{name: "marker before another fence", md: readmeSkipMarker + "\n```yaml\nx\n```\n", wantErr: "not ```sh"},
		{name: "no blocks", md: "just prose\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := readmeBlocks(tt.md)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("blocks = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestReadmeStart checks the README's promise to a newcomer: it opens with
// the build command and the test command, and the test command is exactly
// what CI runs.
func TestReadmeStart(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := readmeBlocks(string(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 2 {
		t.Fatalf("README has %d sh blocks; it must start with the build and the test command", len(blocks))
	}
	if b := blocks[0]; b.Skip || !strings.HasPrefix(b.Text, "CGO_ENABLED=0 go build -o reasonix ./cmd/reasonix ") {
		t.Errorf("README's first sh block (line %d) must build ./reasonix and run it, and run in the README test:\n%s", b.Line, b.Text)
	}
	test := blocks[1]
	if !test.Skip || strings.Count(test.Text, "\n") != 1 || !strings.HasPrefix(test.Text, "go test ") {
		t.Fatalf("README's second sh block (line %d) must be the test command alone, after %s:\n%s", test.Line, readmeSkipMarker, test.Text)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.TrimSpace(test.Text)
	found := false
	for _, line := range strings.Split(string(ci), "\n") {
		found = found || strings.TrimSpace(line) == cmd
	}
	if !found {
		t.Errorf(".ci/run does not run the README's test command %q", cmd)
	}
}

// TestReadme runs the README (see the top of this file).
func TestReadme(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped: -short (the README tour builds reasonix and runs it against a fake GitHub)")
	}
	for _, tool := range []string{"bash", "go", "git", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README needs %s (its prerequisites): %v", tool, err)
		}
	}
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := readmeBlocks(string(md))
	if err != nil {
		t.Fatal(err)
	}
	var run []readmeBlock
	for _, b := range blocks {
		if !b.Skip {
			run = append(run, b)
		}
	}
	if len(run) < 10 {
		t.Fatalf("only %d of the README's %d sh blocks would run; the tour has more", len(run), len(blocks))
	}

	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// The store keeps read-only trees; make them removable for TempDir's
	// cleanup (which runs after this one).
	t.Cleanup(func() { makeWritable(tmp) })
	src, home, tmpdir := filepath.Join(tmp, "src"), filepath.Join(tmp, "home"), filepath.Join(tmp, "tmp")
	for _, d := range []string{src, home, tmpdir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A newcomer's clone: the checkout's files (working-tree content, new
	// files included), without what is ignored, such as a ./reasonix built
	// before. The README runs there, so it neither overwrites the
	// developer's ./reasonix nor races another run of this test.
	copied, err := copyCheckout(root, src)
	if err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(15 * time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-10 * time.Second)
	}

	// Compile what the README builds first, with the test's own network
	// (it may need to fetch modules; the README runs with the module proxy
	// off), so a cold build cache costs this step rather than the README's
	// budget. -trimpath keeps the copy's folder out of the compiler's cache
	// keys, so this step and the README's own builds reuse what any earlier
	// run compiled instead of compiling the module again in every new copy.
	warm, cancelWarm := context.WithDeadline(context.Background(), deadline)
	defer cancelWarm()
	start := time.Now()
	reasonix := exec.CommandContext(warm, "go", "build", "-o", os.DevNull, "./cmd/reasonix")
	reasonix.Env = append(os.Environ(), readmeGoFlags, "GOTOOLCHAIN=local", "CGO_ENABLED=0") // static, as the README builds it
	fake := exec.CommandContext(warm, "go", "build", "-o", os.DevNull, "./internal/fakegithub/cmd/fakegithub")
	fake.Env = append(os.Environ(), readmeGoFlags, "GOTOOLCHAIN=local")
	for _, build := range []*exec.Cmd{reasonix, fake} {
		build.Dir = src
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("compiling what the README builds: %v\n%s", err, out)
		}
	}
	t.Logf("copied %d files and compiled reasonix and the fake GitHub in %v", len(copied), time.Since(start).Round(time.Millisecond))

	env, err := readmeEnv(home, tmpdir)
	if err != nil {
		t.Fatal(err)
	}

	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range run {
		fmt.Fprintf(&script, "printf '\\n%s%d %%s\\n' \"${EPOCHREALTIME:-}\"\n%s", readmeBlockMark, i, b.Text)
	}
	fmt.Fprintf(&script, "printf '\\n%s%d %%s\\n' \"${EPOCHREALTIME:-}\"\n", readmeBlockMark, len(run))
	scriptPath := filepath.Join(tmp, "readme.sh")
	if err := os.WriteFile(scriptPath, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(tmp, "readme.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()

	runDeadline := time.Now().Add(readmeBudget)
	if runDeadline.After(deadline) {
		runDeadline = deadline
	}
	ctx, cancel := context.WithDeadline(context.Background(), runDeadline)
	defer cancel()
	argv := []string{"bash", "--noprofile", "--norc", scriptPath}
	if pre, err := loopbackOnly(ctx); err != nil {
		t.Logf("running the README with the network it has (loopback-only guarded by the environment alone): %v", err)
	} else {
		argv = append(pre, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = src
	cmd.Env = env
	// A file, not a pipe, for its output: a server the README leaves running
	// would hold a pipe open and hang Wait.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, so the servers the README starts in the
	// background (bash without job control keeps them in its group) are
	// killed with it on a timeout, and found if it leaves them running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start = time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	if cmd.Process != nil {
		pgid := cmd.Process.Pid
		// Whatever is left of the group goes; ESRCH (nothing left) is the
		// usual case.
		defer func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }()
		if left := groupLeftovers(pgid, 5*time.Second); len(left) > 0 {
			t.Errorf("the README leaves background processes running (each section must stop what it starts):\n  %s", strings.Join(left, "\n  "))
		}
	}

	out, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	reached, times := readmeMarks(out)
	for i := 0; i+1 < len(times) && i < len(run); i++ {
		if times[i] > 0 && times[i+1] > 0 {
			t.Logf("README.md:%d: %.1fs", run[i].Line, times[i+1]-times[i])
		}
	}
	t.Logf("ran %d README blocks in %v", len(run), elapsed.Round(time.Millisecond))
	if runErr != nil || reached != len(run) {
		why := fmt.Sprint(runErr)
		if ctx.Err() != nil {
			why = fmt.Sprintf("timed out after %v", elapsed.Round(time.Second))
		}
		i := min(max(reached, 0), len(run)-1)
		t.Fatalf("README block %d of %d (README.md:%d) failed: %s\n--- the block ---\n%s--- its output ---\n%s",
			i+1, len(run), run[i].Line, why, run[i].Text, tail(blockOutput(out, i), 16<<10))
	}
	left, err := strayFiles(src, copied)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range left {
		t.Errorf("the README leaves %s in the checkout (only ./reasonix may be; use a mktemp -d folder)", p)
	}
}

// readmeGoFlags is the go command's flags for every build of the README
// test (see the warm-up in TestReadme); -buildvcs=false because the copy
// may sit inside some unrelated repository.
const readmeGoFlags = "GOFLAGS=-trimpath -buildvcs=false"

// readmeEnv is a fresh shell's environment for the README: the caller's,
// without anything that would point reasonix at a real home, token, mirror
// or proxy, with HOME and TMPDIR in the test's directory, the go command
// offline on the caller's caches, and the internet out of reach.
func readmeEnv(home, tmpdir string) ([]string, error) {
	goenv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	vals := strings.Split(strings.TrimRight(string(goenv), "\n"), "\n")
	if len(vals) != 4 {
		return nil, fmt.Errorf("go env printed %q", goenv)
	}
	drop := func(k string) bool {
		switch strings.ToUpper(k) {
		case "HOME", "TMPDIR", "GITHUB_TOKEN", "GH_TOKEN", "BASH_ENV", "ENV", "CDPATH", "GOPROXY", "GOTOOLCHAIN", "GOFLAGS",
			"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
			"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM":
			return true
		}
		return strings.HasPrefix(k, "REASONIX_")
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop(k) {
			env = append(env, kv)
		}
	}
	return append(env,
		"HOME="+home, "TMPDIR="+tmpdir,
		"GOCACHE="+vals[0], "GOMODCACHE="+vals[1], "GOPATH="+vals[2], "GOENV="+vals[3],
		readmeGoFlags, "GOPROXY=off", "GOTOOLCHAIN=local",
		// A section that forgets to point github.com at its fake, or any
		// other remote, fails here instead of reaching the internet (where
		// loopbackOnly could not cut the network off altogether).
		"REASONIX_GITHUB_URL="+readmeDeadAddr, "REASONIX_GITHUB_API_URL="+readmeDeadAddr+"/api/v3",
		"http_proxy="+readmeDeadAddr, "https_proxy="+readmeDeadAddr, "all_proxy="+readmeDeadAddr,
		"HTTP_PROXY="+readmeDeadAddr, "HTTPS_PROXY="+readmeDeadAddr, "ALL_PROXY="+readmeDeadAddr,
		"no_proxy=127.0.0.1,localhost,::1", "NO_PROXY=127.0.0.1,localhost,::1",
	), nil
}

// loopbackOnly returns the command prefix that runs a command in a network
// namespace of its own with only loopback up (util-linux unshare, as the
// namespace's root through a user namespace, and iproute2's ip): whatever
// the README does, nothing leaves the machine. The error says why not when
// the machine does not allow it (no unshare or ip, user namespaces off).
func loopbackOnly(ctx context.Context) ([]string, error) {
	pre := []string{"unshare", "--net", "--map-root-user", "sh", "-c", `ip link set lo up && exec "$@"`, "sh"}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, err
		}
	}
	probe := exec.CommandContext(ctx, pre[0], append(pre[1:], "true")...)
	if out, err := probe.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(pre[:3], " "), err, strings.TrimSpace(string(out)))
	}
	return pre, nil
}

// copyCheckout copies the checkout at root into dst as a clone would have
// it: with git, the tracked files as they are in the working tree and the
// untracked ones that are not ignored; in a source archive (no git), every
// file but ./reasonix. It returns the copied paths, relative and
// slash-separated.
func copyCheckout(root, dst string) (map[string]bool, error) {
	var paths []string
	ls := exec.Command("git", "--no-optional-locks", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	if out, err := ls.Output(); err == nil {
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" {
				paths = append(paths, p)
			}
		}
	} else {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case d.IsDir() && d.Name() == ".git":
				return filepath.SkipDir
			case d.IsDir() || rel == "reasonix":
				return nil
			}
			paths = append(paths, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", root, err)
		}
	}
	copied := map[string]bool{}
	for _, p := range paths {
		from, to := filepath.Join(root, p), filepath.Join(dst, p)
		fi, err := os.Lstat(from)
		if errors.Is(err, os.ErrNotExist) {
			continue // tracked, deleted in the working tree
		}
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(from)
			if err != nil {
				return nil, err
			}
			if err := os.Symlink(target, to); err != nil {
				return nil, err
			}
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(from)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
				return nil, err
			}
		default:
			continue // a submodule's folder, a socket: nothing a clone has as a file
		}
		copied[p] = true
	}
	return copied, nil
}

// strayFiles lists the files under dir, relative and slash-separated, that
// are neither in copied nor ./reasonix.
func strayFiles(dir string, copied map[string]bool) ([]string, error) {
	var stray []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !copied[rel] && rel != "reasonix" {
			stray = append(stray, rel)
		}
		return nil
	})
	return stray, err
}

// readmeMarks reads the block marks in the log: how many blocks started
// after the first (the index of the block running when the log ended, or
// len(run) when the end mark was reached), and each mark's time in seconds
// (0 when bash has no EPOCHREALTIME).
func readmeMarks(out []byte) (reached int, times []float64) {
	reached = -1
	for _, line := range strings.Split(string(out), "\n") {
		rest, ok := strings.CutPrefix(line, readmeBlockMark)
		if !ok {
			continue
		}
		idx, at, _ := strings.Cut(rest, " ")
		n, err := strconv.Atoi(idx)
		if err != nil {
			continue
		}
		reached = n
		sec, _ := strconv.ParseFloat(at, 64)
		times = append(times, sec)
	}
	return reached, times
}

// blockOutput is what the log holds from block i's mark to the next mark.
func blockOutput(out []byte, i int) string {
	mark := []byte(readmeBlockMark + strconv.Itoa(i) + " ")
	at := bytes.Index(out, mark)
	if at < 0 {
		return string(out)
	}
	rest := out[at:]
	if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[nl+1:]
	}
	if next := bytes.Index(rest, []byte("\n"+readmeBlockMark)); next >= 0 {
		rest = rest[:next+1]
	}
	return string(rest)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// groupLeftovers lists the live (non-zombie) processes of process group
// pgid, waiting up to grace for them to exit: a server the README killed
// may still be draining. Only Linux has /proc to look in; elsewhere the
// caller's kill of the group is all there is.
func groupLeftovers(pgid int, grace time.Duration) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	deadline := time.Now().Add(grace)
	for {
		left := liveGroupMembers(pgid)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func liveGroupMembers(pgid int) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var left []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
		end := bytes.LastIndexByte(stat, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(stat[end+1:]))
		if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		left = append(left, fmt.Sprintf("pid %d: %s", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
	}
	return left
}

// makeWritable gives the owner write access to every directory under dir,
// so it can be removed.
func makeWritable(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}

func TestCopyCheckout(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git: %v", err)
	}
	// Each case lays out the same files; with git, some are tracked, one
	// is ignored and one tracked file is deleted from the working tree.
	tests := []struct {
		name string
		git  bool
		want []string
	}{
		{
			name: "checkout: tracked and untracked files, not ignored ones",
			git:  true,
			want: []string{".gitignore", "README.md", "cmd/x/main.go", "link", "new.txt", "run.sh"},
		},
		{
			name: "source archive: every file but ./reasonix",
			want: []string{".gitignore", "README.md", "bin/tool", "cmd/x/main.go", "link", "new.txt", "run.sh"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, dst := t.TempDir(), t.TempDir()
			write := func(rel, data string, mode os.FileMode) {
				t.Helper()
				p := filepath.Join(root, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), mode); err != nil {
					t.Fatal(err)
				}
			}
			write(".gitignore", "/reasonix\n/bin/\n", 0o644)
			write("README.md", "# x\n", 0o644)
			write("cmd/x/main.go", "package main\n", 0o644)
			write("run.sh", "#!/bin/sh\n", 0o755)
			write("gone.txt", "deleted later\n", 0o644)
			if err := os.Symlink("README.md", filepath.Join(root, "link")); err != nil {
				t.Fatal(err)
			}
			if tt.git {
				gitIn(t, root, "init", "-q")
				gitIn(t, root, "add", ".gitignore", "README.md", "cmd", "run.sh", "gone.txt", "link")
			}
			if err := os.Remove(filepath.Join(root, "gone.txt")); err != nil {
				t.Fatal(err)
			}
			write("new.txt", "untracked\n", 0o644)
			write("reasonix", "a binary built before\n", 0o755)
			write("bin/tool", "ignored\n", 0o755)

			copied, err := copyCheckout(root, dst)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for p := range copied {
				got = append(got, p)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("copied %q, want %q", got, tt.want)
			}
			if fi, err := os.Stat(filepath.Join(dst, "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("run.sh: %v, mode %v; want its mode 0755 kept", err, fi)
			}
			if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != "README.md" {
				t.Errorf("link: %q, %v; want a symlink to README.md", target, err)
			}
			if data, err := os.ReadFile(filepath.Join(dst, "cmd/x/main.go")); err != nil || string(data) != "package main\n" {
				t.Errorf("cmd/x/main.go: %q, %v", data, err)
			}

			// What a run leaves beside the copy: ./reasonix is expected,
			// anything else is reported.
			for _, p := range []string{"reasonix", "cmd/x/stray.out"} {
				if err := os.WriteFile(filepath.Join(dst, p), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			stray, err := strayFiles(dst, copied)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"cmd/x/stray.out"}; !reflect.DeepEqual(stray, want) {
				t.Errorf("strayFiles = %q, want %q", stray, want)
			}
		})
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
