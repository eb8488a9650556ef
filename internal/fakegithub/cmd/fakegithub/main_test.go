package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
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
		done <- run(ctx, []string{"-dir", t.TempDir(), "-repo", "acme/tools=" + plugin}, &stdout, io.Discard,
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
		"non-loopback addr": {"-addr", "0.0.0.0:0"},
		"bad repo spec":     {"-repo", "acme-tools"},
		"missing dir":       {"-repo", "acme/tools=" + filepath.Join(t.TempDir(), "nope")},
		"stray argument":    {"extra"},
	}
	for name, args := range tests {
		err := run(context.Background(), args, io.Discard, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil {
			t.Errorf("%s: run(%q) succeeded", name, args)
		}
	}
}
