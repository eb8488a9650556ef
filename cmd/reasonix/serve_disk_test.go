package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeWithoutACache: the daemon starts over a home whose cache cannot
// be opened, logs one warning saying so, and serves: listing, planning and
// installing (plan, then install with the planId and the source, since no
// plan survives without a cache) all work.
func TestServeWithoutACache(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	must(t, os.WriteFile(filepath.Join(home, "cache"), []byte("in the way"), 0o644))
	src := copyDir(t, filepath.Join("..", "..", "examples", "hello-claude"), filepath.Join(t.TempDir(), "hello-claude"))
	d := startDaemon(t, home, nil)
	if r := d.do("GET", "/plugins", nil); r.status != 200 {
		t.Fatalf("GET /plugins: %d %s", r.status, r.body)
	}
	plan := d.do("POST", "/plugins/plan", map[string]any{"source": src})
	if plan.status != 200 {
		t.Fatalf("plan: %d %s", plan.status, plan.body)
	}
	id := plan.json(t)["planId"].(string)
	// Without a cache the daemon keeps no plans: planId alone is refused
	// clearly, planId with its source is planned again and applied.
	if r := d.do("POST", "/plugins/install", map[string]any{"planId": id}); r.status != 422 || r.json(t)["errorCode"] != "install.approval_denied" {
		t.Fatalf("install by planId alone: %d %s", r.status, r.body)
	}
	if r := d.do("POST", "/plugins/install", map[string]any{"planId": id, "source": src}); r.status != 200 || r.json(t)["applied"] != true {
		t.Fatalf("install: %d %s", r.status, r.body)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, d.stderr)
	}
	var warns []string
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		if strings.Contains(l, "the cache is unavailable") {
			warns = append(warns, l)
		}
	}
	if len(warns) != 1 {
		t.Fatalf("want one warning about the cache, got %q\n%s", warns, d.stderr)
	}
}
