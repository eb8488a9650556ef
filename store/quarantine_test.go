package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
)

// tamper rewrites one file of a stored snapshot, as a user or another
// program with write access to the home could.
func tamper(t *testing.T, s *Store, digest, rel, body string) {
	t.Helper()
	p, err := s.Path(digest)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(p, filepath.FromSlash(rel))
	if err := os.Chmod(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte(body), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(target), 0o555); err != nil {
		t.Fatal(err)
	}
}

func TestQuarantine(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	good, err := stageAndCommit(t, s, sample)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := stageAndCommit(t, s, map[string]file{"doc.md": {body: "original"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckSnapshot(bad); err != nil {
		t.Fatalf("intact snapshot failed its check: %v", err)
	}
	tamper(t, s, bad, "doc.md", "tampered")
	err = s.CheckSnapshot(bad)
	if err == nil || !strings.Contains(err.Error(), "content hashes to sha256:") {
		t.Fatalf("CheckSnapshot of a tampered snapshot = %v", err)
	}
	if s.Quarantined(bad) {
		t.Fatal("Quarantined before Quarantine")
	}

	before := time.Now().UTC().Add(-time.Second)
	if err := s.Quarantine(bad); err != nil {
		t.Fatal(err)
	}
	if s.Has(bad) || !s.Quarantined(bad) || !s.Has(good) || s.Quarantined(good) {
		t.Fatalf("after Quarantine: Has=%v Quarantined=%v, good Has=%v Quarantined=%v", s.Has(bad), s.Quarantined(bad), s.Has(good), s.Quarantined(good))
	}
	entries, err := os.ReadDir(s.quarantine)
	if err != nil || len(entries) != 1 {
		t.Fatalf("quarantine/ = %v, %v", entries, err)
	}
	name := entries[0].Name()
	at, ok := quarantinedAt(name)
	if !strings.HasPrefix(name, hexOf(bad)+"-") || !ok || at.Before(before.Truncate(time.Second)) {
		t.Fatalf("quarantine entry %q (time %v, %v)", name, at, ok)
	}
	// The evidence is kept as it was found, read-only.
	kept := filepath.Join(s.quarantine, name)
	if b, err := os.ReadFile(filepath.Join(kept, "doc.md")); err != nil || string(b) != "tampered" {
		t.Fatalf("quarantined content: %q, %v", b, err)
	}
	if info, err := os.Stat(kept); err != nil || info.Mode().Perm()&0o222 != 0 {
		t.Fatalf("quarantined snapshot is writable: %v %v", info.Mode(), err)
	}
	if err := s.Quarantine(bad); plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Fatalf("second Quarantine = %v, want %s", err, plugind.CodeNotFound)
	}
	if err := s.CheckSnapshot(bad); plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Fatalf("CheckSnapshot of a quarantined snapshot = %v, want %s", err, plugind.CodeNotFound)
	}
	if err := s.Quarantine("sha256:nope"); plugind.CodeOf(err) != plugind.CodeInvalidSource {
		t.Fatalf("Quarantine of a malformed digest = %v", err)
	}

	// A fresh fetch of the same content goes back in, beside the evidence,
	// and a second quarantine in the same second keeps both.
	again, err := stageAndCommit(t, s, map[string]file{"doc.md": {body: "original"}})
	if err != nil || again != bad || !s.Has(bad) {
		t.Fatalf("recommit after quarantine: %s %v (Has %v)", again, err, s.Has(bad))
	}
	if err := s.Quarantine(bad); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(s.quarantine); len(entries) != 2 {
		t.Fatalf("second quarantine replaced the first: %v", entries)
	}

	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Bad) != 0 || rep.Checked != 1 {
		t.Fatalf("Verify after quarantine: %+v", rep)
	}
}

// TestGCCleansQuarantine: a week of evidence is kept by a normal GC; All
// removes every quarantined entry.
func TestGCCleansQuarantine(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	hex := strings.Repeat("ab", 32)
	old := time.Now().UTC().Add(-quarantineKeep - time.Hour).Format(quarantineStamp)
	recent := time.Now().UTC().Add(-time.Hour).Format(quarantineStamp)
	for _, name := range []string{hex + "-" + old, hex + "-" + recent, hex + "-" + old + "-2"} {
		writeTree(t, filepath.Join(s.quarantine, name), map[string]file{"f": {body: "x"}})
		if err := os.Chmod(filepath.Join(s.quarantine, name), 0o555); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.GC(context.Background(), GCPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(s.quarantine)
	if rep.QuarantineRemoved != 2 || len(left) != 1 || left[0].Name() != hex+"-"+recent {
		t.Fatalf("GC removed %d, left %v; want the two week-old entries gone", rep.QuarantineRemoved, left)
	}
	rep, err = s.GC(context.Background(), GCPolicy{All: true})
	if err != nil {
		t.Fatal(err)
	}
	left, _ = os.ReadDir(s.quarantine)
	if rep.QuarantineRemoved != 1 || len(left) != 0 {
		t.Fatalf("GC --all removed %d, left %v", rep.QuarantineRemoved, left)
	}
}

func TestSnapshotOf(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	hex := strings.Repeat("0a", 32)
	snap := filepath.Join(s.snapshots, hex)
	for _, tc := range []struct {
		path string
		want string
	}{
		{snap, "sha256:" + hex},
		{filepath.Join(snap, "plugins", "x"), "sha256:" + hex},
		{filepath.Join(snap, "..", hex, "a"), "sha256:" + hex},
		{s.snapshots, ""},
		{filepath.Join(s.snapshots, "junk", "a"), ""},
		{filepath.Join(s.snapshots, strings.ToUpper(hex)), ""},
		{filepath.Join(s.staging, hex), ""},
		{filepath.Join(snap, "..", "..", "trash", hex), ""},
		{t.TempDir(), ""},
	} {
		got, ok := s.SnapshotOf(tc.path)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("SnapshotOf(%s) = %q, %v; want %q", tc.path, got, ok, tc.want)
		}
	}
}
