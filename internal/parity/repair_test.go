package parity

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRepairCarriesPinnedCommits: a snapshot whose HEAD lacks a blob is
// rebuilt without its history, so the older commit an entry pins is
// rebuilt too, on a branch of its own, and served maps both.
func TestRepairCarriesPinnedCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	work := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := Git(ctx, filepath.Join(work, ".git"), nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	commit := func(name, content string) string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", name}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = work
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		return git("rev-parse", "HEAD")
	}
	if out, err := exec.Command("git", "init", "-q", "-b", "main", work).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	old := commit("pinned.md", "pinned")
	head := commit("big.bin", "large")
	blob := git("rev-parse", "HEAD:big.bin")
	if err := os.Remove(filepath.Join(work, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fixed.git")
	main, served, repaired, err := Repair(ctx, filepath.Join(work, ".git"), out, old, head)
	if err != nil || !repaired {
		t.Fatalf("repair: %v %t", err, repaired)
	}
	if served[head] != main || served[old] == "" || served[old] == old || len(served) != 2 {
		t.Fatalf("served %v (main %s)", served, main)
	}
	branch, err := Git(ctx, out, nil, "rev-parse", "refs/heads/parity-"+old[:12])
	if err != nil || branch != served[old] {
		t.Fatalf("branch of the pinned commit: %s %v", branch, err)
	}
	if got, err := Git(ctx, out, nil, "show", served[old]+":pinned.md"); err != nil || got != "pinned" {
		t.Fatalf("pinned commit's file: %q %v", got, err)
	}
	if _, err := Git(ctx, out, nil, "rev-parse", served[old]+"^"); err == nil {
		t.Error("a rebuilt commit has a parent")
	}
}
