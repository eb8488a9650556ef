package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is written by run's goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRunServesImportedRepo(t *testing.T) {
	t.Parallel()
	plugin := t.TempDir()
	if err := os.WriteFile(filepath.Join(plugin, "reasonix-plugin.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, logs lockedBuffer
	done := make(chan error, 1)
	go func() {
		// A -dir that does not exist yet is made.
		done <- run(ctx, []string{"-dir", filepath.Join(t.TempDir(), "not", "yet"), "-repo", "acme/tools=" + plugin}, &stdout, io.Discard,
			slog.New(slog.NewTextHandler(&logs, nil)))
	}()

	var env map[string]string
	deadline := time.Now().Add(10 * time.Second)
	for env == nil {
		select {
		case err := <-done:
			t.Fatalf("run returned early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no export lines; stdout %q", stdout.String())
		}
		if out := stdout.String(); strings.Contains(out, "# try:") {
			env = map[string]string{}
			for _, line := range strings.Split(out, "\n") {
				if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok && strings.HasPrefix(line, "export ") {
					env[k] = v
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	api := env["REASONIX_GITHUB_API_URL"]
	if !strings.HasPrefix(env["REASONIX_GITHUB_URL"], "http://127.0.0.1:") || api != env["REASONIX_GITHUB_URL"]+"/api/v3" {
		t.Fatalf("env = %v", env)
	}
	resp, err := http.Get(api + "/repos/acme/tools/commits/main")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("commits/main: %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop on cancel")
	}
	if l := logs.String(); !strings.Contains(l, "path=/api/v3/repos/acme/tools/commits/main") || !strings.Contains(l, "msg=imported") {
		t.Fatalf("logs lack the import or the request:\n%s", l)
	}
}

func TestRunRejects(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"non-loopback addr":  {"-addr", "0.0.0.0:0"},
		"bad repo spec":      {"-repo", "acme-tools"},
		"missing dir":        {"-repo", "acme/tools=" + filepath.Join(t.TempDir(), "nope")},
		"bad git-repo spec":  {"-git-repo", "team/tools"},
		"nested on GitHub":   {"-git-repo", "group/sub/tools=" + t.TempDir()},
		"bad plain path":     {"-plain-git", "-git-repo", "group/../tools=" + t.TempDir()},
		"ready file nowhere": {"-ready-file", filepath.Join(t.TempDir(), "no", "such", "dir", "url")},
		"stray argument":     {"extra"},
		"bad bare spec":      {"-bare", "acme/tools"},
		"bare not git":       {"-bare", "acme/tools=" + t.TempDir()},
		"negative budget":    {"-api-budget", "-1"},
		"empty window":       {"-api-budget", "5", "-api-budget-window", "0s"},
		"budget, plain git":  {"-plain-git", "-api-budget", "5"},
	}
	for name, args := range tests {
		err := run(context.Background(), args, io.Discard, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil {
			t.Errorf("%s: run(%q) succeeded", name, args)
		}
	}
}

// startRun runs the command and returns its stdout lines up to and including
// the ready line, reading them as they come: no sleeping, as a script would.
func startRun(t *testing.T, ctx context.Context, args []string) (lines []string, done <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
		pw.CloseWithError(fmt.Errorf("run returned: %v", err))
		errc <- err
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "fakegithub: listening on ") {
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			return lines, errc
		}
	}
	t.Fatalf("no ready line: %v; stdout %q", sc.Err(), lines)
	return nil, nil
}

func TestRunPlainGitReady(t *testing.T) {
	t.Parallel()
	team, nested := t.TempDir(), t.TempDir()
	for dir, content := range map[string]string{team: "team", nested: "nested"} {
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ready := filepath.Join(t.TempDir(), "url")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := startRun(t, ctx, []string{"-plain-git", "-dir", t.TempDir(), "-ready-file", ready,
		"-git-repo", "team/tools=" + team, "-git-repo", "group/sub/tools=" + nested})

	url := strings.TrimPrefix(lines[len(lines)-1], "fakegithub: listening on ")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("ready line %q", lines[len(lines)-1])
	}
	if b, err := os.ReadFile(ready); err != nil || string(b) != url+"\n" {
		t.Fatalf("ready file = %q, %v; want %q", b, err, url+"\n")
	}
	want := []string{"# try: git clone " + url + "/team/tools.git", "# try: git clone " + url + "/group/sub/tools.git", lines[len(lines)-1]}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout = %q, want %q (no GitHub exports on a plain host)", lines, want)
	}
	for path, content := range map[string]string{"team/tools": "team", "group/sub/tools": "nested"} {
		dir := t.TempDir()
		cmd := exec.Command("git", "clone", "--quiet", url+"/"+path+".git", dir)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("clone %s: %v\n%s", path, err, out)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "README.md")); err != nil || string(b) != content {
			t.Fatalf("%s README = %q, %v", path, b, err)
		}
	}
	resp, err := http.Get(url + "/api/v3/repos/team/tools")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("REST on a plain host: %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop on cancel")
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Fatalf("ready file left behind: %v", err)
	}
}

func TestRunGitHubReadyLineLast(t *testing.T) {
	t.Parallel()
	plugin := t.TempDir()
	if err := os.WriteFile(filepath.Join(plugin, "reasonix-plugin.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := startRun(t, ctx, []string{"-dir", t.TempDir(), "-git-repo", "acme/tools=" + plugin})
	url := strings.TrimPrefix(lines[len(lines)-1], "fakegithub: listening on ")
	want := []string{"export REASONIX_GITHUB_URL=" + url, "export REASONIX_GITHUB_API_URL=" + url + "/api/v3",
		"# try: reasonix plugin install git:github.com/acme/tools --dry-run", "fakegithub: listening on " + url}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout = %q, want %q", lines, want)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRunServesBareWithItsHistory(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.test", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.test")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "--quiet", "--initial-branch=develop", ".")
	git("commit", "--quiet", "--allow-empty", "-m", "one")
	pinned := git("rev-parse", "HEAD")
	git("commit", "--quiet", "--allow-empty", "-m", "two")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := startRun(t, ctx, []string{"-dir", t.TempDir(), "-bare", "acme/real=" + filepath.Join(src, ".git")})
	url := strings.TrimPrefix(lines[len(lines)-1], "fakegithub: listening on ")
	if !strings.Contains(strings.Join(lines, "\n"), "# try: reasonix plugin install git:github.com/acme/real --dry-run") {
		t.Fatalf("stdout = %q", lines)
	}
	for path, want := range map[string]string{"/commits/" + pinned: pinned, "": "develop"} {
		resp, err := http.Get(url + "/api/v3/repos/acme/real" + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"`+want+`"`) {
			t.Fatalf("GET repos/acme/real%s: %d, body lacks %q: %.200s", path, resp.StatusCode, want, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRunServeAnyWants: a partial clone's lazy fetch of a blob by SHA (what
// Claude Code's git-subdir installs do) is refused by default and served
// with -serve-any-wants.
func TestRunServeAnyWants(t *testing.T) {
	t.Parallel()
	plugin := t.TempDir()
	if err := os.WriteFile(filepath.Join(plugin, "SKILL.md"), []byte("lazy blob\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		flags  []string
		wantOK bool
	}{
		{"default refuses a blob want", nil, false},
		{"serve-any-wants serves it", []string{"-serve-any-wants"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			args := append([]string{"-dir", t.TempDir(), "-repo", "acme/tools=" + plugin}, tt.flags...)
			lines, done := startRun(t, ctx, args)
			url := strings.TrimPrefix(lines[len(lines)-1], "fakegithub: listening on ")
			clone := filepath.Join(t.TempDir(), "c")
			git := func(args ...string) ([]byte, error) {
				cmd := exec.Command("git", args...)
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
				return cmd.CombinedOutput()
			}
			if out, err := git("clone", "--quiet", "--filter=blob:none", "--no-checkout", url+"/acme/tools.git", clone); err != nil {
				t.Fatalf("partial clone: %v\n%s", err, out)
			}
			out, err := git("-C", clone, "cat-file", "-p", "HEAD:SKILL.md")
			if got := err == nil && string(out) == "lazy blob\n"; got != tt.wantOK {
				t.Errorf("lazy fetch of SKILL.md: ok=%t (err %v, output %q), want ok=%t", got, err, out, tt.wantOK)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}
