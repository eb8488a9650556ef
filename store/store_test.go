package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix.io/plugind"
)

// file is one entry of a test tree: content, or a symlink target when link
// is set.
type file struct {
	body string
	exec bool
	link string
}

func writeTree(t testing.TB, root string, files map[string]file) {
	t.Helper()
	if err := makeTree(root, files); err != nil {
		t.Fatal(err)
	}
}

func makeTree(root string, files map[string]file) error {
	for name, f := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if f.link != "" {
			if err := os.Symlink(f.link, p); err != nil {
				return err
			}
			continue
		}
		mode := os.FileMode(0o644)
		if f.exec {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(f.body), mode); err != nil {
			return err
		}
	}
	return nil
}

var sample = map[string]file{
	"reasonix-plugin.json": {body: `{"apiVersion":"reasonix.io/plugin/v2"}`},
	"skills/a/SKILL.md":    {body: "---\nname: a\n---\n"},
	"bin/run.sh":           {body: "#!/bin/sh\necho hi\n", exec: true},
}

func openStore(t testing.TB, opts Options) *Store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	cleanStore(t, dir)
	return s
}

// cleanStore lets t.TempDir's cleanup delete a store whose snapshots are
// read-only (it cannot as a non-root user). Cleanups run last-in first-out,
// so this runs before TempDir's.
func cleanStore(t testing.TB, dir string) {
	t.Cleanup(func() {
		if err := removeTree(dir); err != nil {
			t.Errorf("clean up store: %v", err)
		}
	})
}

// stageAndCommit stages files the way an extractor would (creating Dir
// itself) and commits them.
func stageAndCommit(t testing.TB, s *Store, files map[string]file) (string, error) {
	t.Helper()
	st, err := s.Stage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(st.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Staging.Dir exists before the writer creates it: %v", err)
	}
	writeTree(t, st.Dir, files)
	return s.Commit(context.Background(), st)
}

func digestOf(t testing.TB, files map[string]file) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ref")
	writeTree(t, dir, files)
	d, _, err := plugind.TreeDigest(dir, plugind.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// assertClean fails if any staging or trash entry is left over.
func assertClean(t testing.TB, s *Store) {
	t.Helper()
	for _, d := range []string{s.staging, s.trash} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 0 {
			t.Fatalf("%s has leftovers: %v", d, entries)
		}
	}
}

func snapshotNames(t testing.TB, s *Store) []string {
	t.Helper()
	entries, err := os.ReadDir(s.snapshots)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestCommitStoresReadOnlyAndDedupes(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	d1, err := stageAndCommit(t, s, sample)
	if err != nil {
		t.Fatal(err)
	}
	if want := digestOf(t, sample); d1 != want {
		t.Fatalf("digest %s, want the SPEC §9 tree digest %s", d1, want)
	}
	p, err := s.Path(d1)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(p) || filepath.Base(p) != strings.TrimPrefix(d1, "sha256:") {
		t.Fatalf("Path = %s", p)
	}
	got, err := os.ReadFile(filepath.Join(p, "bin", "run.sh"))
	if err != nil || string(got) != sample["bin/run.sh"].body {
		t.Fatalf("content = %q, %v", got, err)
	}
	// Modes are checked rather than write attempts, which root would pass.
	err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, _ := d.Info()
		want := fs.FileMode(0o444)
		switch {
		case d.IsDir():
			want = 0o555
		case strings.HasSuffix(q, "run.sh"):
			want = 0o555
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", q, info.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	d2, err := stageAndCommit(t, s, sample)
	if err != nil || d2 != d1 {
		t.Fatalf("second commit = %s, %v; want %s", d2, err, d1)
	}
	if n := snapshotNames(t, s); len(n) != 1 {
		t.Fatalf("identical content stored %d times: %v", len(n), n)
	}
	assertClean(t, s)
	if !s.Has(d1) || s.Has(digestOf(t, map[string]file{"x": {body: "other"}})) {
		t.Fatal("Has is wrong")
	}
}

func TestCommitNormalizesToTheDigest(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	staged := map[string]file{
		"real.txt":        {body: "target", exec: true},
		"link.txt":        {link: "real.txt"},
		"deep/link2.txt":  {link: "../link.txt"},
		"tools/skills":    {link: "../deep"},
		".git/config":     {body: "[core]"},
		"sub/.git":        {body: "gitdir: elsewhere"},
		"empty/inner/.gk": {body: "x"},
	}
	st, err := s.Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, st.Dir, staged)
	if err := os.Remove(filepath.Join(st.Dir, "empty", "inner", ".gk")); err != nil {
		t.Fatal(err)
	}
	d, err := s.Commit(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	want := digestOf(t, map[string]file{
		"real.txt":               {body: "target", exec: true},
		"link.txt":               {body: "target", exec: true},
		"deep/link2.txt":         {body: "target", exec: true},
		"tools/skills/link2.txt": {body: "target", exec: true},
	})
	if d != want {
		t.Fatalf("digest %s, want %s", d, want)
	}
	p, _ := s.Path(d)
	for _, gone := range []string{".git", "sub", "empty"} {
		if _, err := os.Lstat(filepath.Join(p, gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived normalization (%v)", gone, err)
		}
	}
	if info, err := os.Lstat(filepath.Join(p, "tools", "skills")); err != nil || !info.IsDir() {
		t.Errorf("the folder link is not a folder: %v %v", info, err)
	}
	for _, l := range []string{"link.txt", "deep/link2.txt", "tools/skills/link2.txt"} {
		info, err := os.Lstat(filepath.Join(p, filepath.FromSlash(l)))
		if err != nil || !info.Mode().IsRegular() {
			t.Errorf("%s not materialized: %v %v", l, info, err)
		}
	}
	rep, err := s.Verify(context.Background())
	if err != nil || len(rep.Bad) != 0 || rep.Checked != 1 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestCommitFailuresLeaveNothing(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		budget   plugind.Budget
		ctx      context.Context
		files    map[string]file
		noDir    bool
		wantCode plugind.Code
		wantMsg  string
	}{
		{name: "file budget", budget: plugind.Budget{MaxFiles: 2}, files: sample,
			wantCode: plugind.CodeBudgetExceeded, wantMsg: "over by 1"},
		{name: "byte budget", budget: plugind.Budget{MaxBytes: 10}, files: map[string]file{"big": {body: strings.Repeat("x", 25)}},
			wantCode: plugind.CodeBudgetExceeded, wantMsg: "over by 15 B"},
		{name: "escaping symlink", files: map[string]file{"a": {body: "a"}, "evil": {link: "/etc/passwd"}},
			wantCode: plugind.CodeUnsafeArchive},
		{name: "folder link cycle", files: map[string]file{"d/a": {body: "a"}, "d/up": {link: ".."}},
			wantCode: plugind.CodeUnsafeArchive, wantMsg: "cycle"},
		{name: "cancelled", ctx: cancelled, files: sample},
		{name: "nothing staged", noDir: true, wantCode: plugind.CodeSourceUnreadable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := openStore(t, Options{Budget: tc.budget})
			st, err := s.Stage()
			if err != nil {
				t.Fatal(err)
			}
			if !tc.noDir {
				writeTree(t, st.Dir, tc.files)
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			d, err := s.Commit(ctx, st)
			if err == nil {
				t.Fatalf("Commit succeeded with %s", d)
			}
			if tc.wantCode != "" && plugind.CodeOf(err) != tc.wantCode {
				t.Errorf("code %q, want %q (%v)", plugind.CodeOf(err), tc.wantCode, err)
			}
			if tc.ctx != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v does not wrap context.Canceled", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
			if n := snapshotNames(t, s); len(n) != 0 {
				t.Errorf("failed commit left snapshots: %v", n)
			}
			assertClean(t, s)
			if _, err := s.Commit(context.Background(), st); err == nil {
				t.Error("committing a spent staging area succeeded")
			}
		})
	}
}

func TestPathValidatesDigest(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	hex := strings.Repeat("a", 64)
	tests := []struct {
		digest string
		code   plugind.Code
	}{
		{"sha256:" + hex, plugind.CodeNotFound},
		{"", plugind.CodeInvalidSource},
		{hex, plugind.CodeInvalidSource},
		{"sha256:" + hex[:63], plugind.CodeInvalidSource},
		{"sha256:" + hex + "a", plugind.CodeInvalidSource},
		{"sha256:" + strings.ToUpper(hex), plugind.CodeInvalidSource},
		{"sha512:" + hex, plugind.CodeInvalidSource},
		{"sha256:../../../../../../etc/passwd" + hex[:33], plugind.CodeInvalidSource},
		{"sha256:" + hex[:62] + "/x", plugind.CodeInvalidSource},
		{"sha256:" + hex[:63] + "g", plugind.CodeInvalidSource},
	}
	for _, tc := range tests {
		_, err := s.Path(tc.digest)
		if plugind.CodeOf(err) != tc.code {
			t.Errorf("Path(%q) = %v (code %q), want code %q", tc.digest, err, plugind.CodeOf(err), tc.code)
		}
		if tc.code == plugind.CodeNotFound && !strings.Contains(err.Error(), tc.digest) {
			t.Errorf("not-found error %q does not name the digest", err)
		}
		if s.Has(tc.digest) {
			t.Errorf("Has(%q) = true", tc.digest)
		}
		if err := s.Remove(tc.digest); plugind.CodeOf(err) != tc.code {
			t.Errorf("Remove(%q) = %v, want code %q", tc.digest, err, tc.code)
		}
	}
}

func TestIngest(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	src := filepath.Join(t.TempDir(), "plugin")
	writeTree(t, src, sample)
	writeTree(t, src, map[string]file{"alias.sh": {link: "bin/run.sh"}, ".git/HEAD": {body: "ref: x"}})
	d, err := s.Ingest(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := plugind.TreeDigest(src, plugind.DefaultBudget)
	if err != nil || d != want {
		t.Fatalf("Ingest digest %s, want %s (%v)", d, want, err)
	}
	p, _ := s.Path(d)
	if info, err := os.Lstat(filepath.Join(p, "alias.sh")); err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o555 {
		t.Fatalf("alias.sh = %v, %v; want a read-only executable regular file", info, err)
	}
	assertClean(t, s)

	small := openStore(t, Options{Budget: plugind.Budget{MaxFiles: 1}})
	if _, err := small.Ingest(context.Background(), src); plugind.CodeOf(err) != plugind.CodeBudgetExceeded {
		t.Fatalf("Ingest over budget = %v", err)
	}
	if n := snapshotNames(t, small); len(n) != 0 {
		t.Fatalf("over-budget ingest stored %v", n)
	}
	assertClean(t, small)
}

func TestVerifyDetectsTampering(t *testing.T) {
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
	p, _ := s.Path(bad)
	target := filepath.Join(p, "doc.md")
	if err := os.Chmod(target, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(s.snapshots, "junk"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 2 {
		t.Errorf("Checked = %d, want 2", rep.Checked)
	}
	byName := map[string]string{}
	for _, b := range rep.Bad {
		byName[b.Digest] = b.Problem
	}
	if len(byName) != 2 {
		t.Fatalf("Bad = %+v, want the tampered snapshot and the stray entry", rep.Bad)
	}
	if pr := byName[bad]; !strings.Contains(pr, "content hashes to sha256:") || !strings.Contains(pr, "doc.md is writable") {
		t.Errorf("tampered problem = %q", pr)
	}
	if _, ok := byName[good]; ok {
		t.Errorf("intact snapshot reported: %q", byName[good])
	}
	if pr := byName["snapshots/junk"]; !strings.Contains(pr, "stray") {
		t.Errorf("stray entry problem = %q", pr)
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	d, err := stageAndCommit(t, s, sample)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(d); err != nil {
		t.Fatal(err)
	}
	if s.Has(d) {
		t.Fatal("still there after Remove")
	}
	if err := s.Remove(d); plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Fatalf("second Remove = %v, want not found", err)
	}
	assertClean(t, s)
	// Content removed can be stored again.
	if d2, err := stageAndCommit(t, s, sample); err != nil || d2 != d {
		t.Fatalf("recommit = %s, %v", d2, err)
	}
}

func TestGCEvictsLRUHonouringKeepAndCap(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{CapBytes: 1 << 30})
	ctx := context.Background()
	base := time.Now().Add(-10 * time.Hour)
	// Four 100-byte snapshots; d[i] last used at base+i hours, except that
	// d[3] has no cache entry and counts by its (recent) commit time.
	var d []string
	for i := 0; i < 4; i++ {
		dg, err := stageAndCommit(t, s, map[string]file{"f": {body: fmt.Sprintf("%03d", i) + strings.Repeat("x", 97)}})
		if err != nil {
			t.Fatal(err)
		}
		d = append(d, dg)
	}
	// Commit times are now; push d0..d2's back so only the cache decides.
	for i := 0; i < 3; i++ {
		p, _ := s.Path(d[i])
		old := base.Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	last := map[string]time.Time{d[0]: base.Add(2 * time.Hour), d[1]: base, d[2]: base.Add(time.Hour)}

	st, err := s.Stats(ctx)
	if err != nil || st.Snapshots != 4 || st.Bytes != 400 || st.Files != 4 || st.CapBytes != 1<<30 {
		t.Fatalf("Stats = %+v, %v", st, err)
	}

	// Cap 150 with d1, the least recently used, kept: the others go in LRU
	// order d2, d0, then d3 (newest by commit time), since after d2 and d0
	// the 200 bytes left are still over the cap.
	rep, err := s.GC(ctx, GCPolicy{CapBytes: 150, Keep: map[string]bool{d[1]: true}, LastUsed: last})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rep.Evicted, ","), strings.Join([]string{d[2], d[0], d[3]}, ","); got != want {
		t.Fatalf("evicted %v, want [d2 d0 d3] = %v", rep.Evicted, []string{d[2], d[0], d[3]})
	}
	if rep.FreedBytes != 300 || rep.RemainingBytes != 100 {
		t.Fatalf("report %+v", rep)
	}
	if !s.Has(d[1]) {
		t.Fatal("kept snapshot evicted")
	}
	assertClean(t, s)
}

func TestGCStopsAtCap(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{CapBytes: 250})
	ctx := context.Background()
	var d []string
	for i := 0; i < 4; i++ {
		dg, err := stageAndCommit(t, s, map[string]file{"f": {body: fmt.Sprintf("%03d", i) + strings.Repeat("y", 97)}})
		if err != nil {
			t.Fatal(err)
		}
		d = append(d, dg)
	}
	now := time.Now()
	last := map[string]time.Time{}
	for i := range d {
		last[d[i]] = now.Add(time.Duration(i) * time.Hour) // d0 oldest
	}
	rep, err := s.GC(ctx, GCPolicy{LastUsed: last}) // the store's own cap, 250
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Evicted) != 2 || rep.Evicted[0] != d[0] || rep.Evicted[1] != d[1] || rep.RemainingBytes != 200 {
		t.Fatalf("report %+v, want d0, d1 evicted and 200 bytes left", rep)
	}
	// Under the cap: nothing more to do.
	rep, err = s.GC(ctx, GCPolicy{LastUsed: last})
	if err != nil || len(rep.Evicted) != 0 {
		t.Fatalf("second GC = %+v, %v", rep, err)
	}
	// All evicts every unkept snapshot whatever the cap.
	rep, err = s.GC(ctx, GCPolicy{All: true, Keep: map[string]bool{d[3]: true}})
	if err != nil || len(rep.Evicted) != 1 || rep.Evicted[0] != d[2] || rep.RemainingBytes != 100 {
		t.Fatalf("GC All = %+v, %v", rep, err)
	}
}

func TestGCRemovesStaleStagingAndTrash(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	ctx := context.Background()
	old := time.Now().Add(-2 * time.Hour)
	age := func(p string) {
		t.Helper()
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	stale, err := s.Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, stale.Dir, sample)
	if err := makeReadOnly(stale.Dir); err != nil { // a crash after chmod
		t.Fatal(err)
	}
	age(stale.Dir)
	age(stale.root)
	fresh, err := s.Stage()
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, fresh.Dir, sample)
	oldTrash := filepath.Join(s.trash, "abandoned")
	writeTree(t, oldTrash, sample)
	age(oldTrash)
	d, err := stageAndCommit(t, s, sample)
	if err != nil {
		t.Fatal(err)
	}
	orphanLock := filepath.Join(s.locks, strings.Repeat("b", 64)+".lock")
	if err := os.WriteFile(orphanLock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	age(orphanLock)

	rep, err := s.GC(ctx, GCPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StaleRemoved != 3 || len(rep.Evicted) != 0 {
		t.Fatalf("report %+v, want 3 stale entries removed and no eviction", rep)
	}
	for _, gone := range []string{stale.root, oldTrash, orphanLock} {
		if exists(gone) {
			t.Errorf("%s survived GC", gone)
		}
	}
	if !exists(fresh.Dir) || !s.Has(d) || !exists(filepath.Join(s.locks, strings.TrimPrefix(d, "sha256:")+".lock")) {
		t.Fatal("GC removed live state")
	}
	if d2, err := s.Commit(ctx, fresh); err != nil || d2 != d {
		t.Fatalf("fresh staging unusable after GC: %s %v", d2, err)
	}
}

// Eight goroutines committing identical content at once: one snapshot, the
// same digest for all, nothing left over.
func TestConcurrentIdenticalCommits(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	files := map[string]file{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("dir%d/f%d.txt", i%5, i)] = file{body: strings.Repeat(fmt.Sprint(i), 200)}
	}
	const n = 8
	stagings := make([]*Staging, n)
	for i := range stagings {
		st, err := s.Stage()
		if err != nil {
			t.Fatal(err)
		}
		writeTree(t, st.Dir, files)
		stagings[i] = st
	}
	digests := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			digests[i], errs[i] = s.Commit(context.Background(), stagings[i])
		}()
	}
	close(start)
	wg.Wait()
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			t.Fatalf("commit %d: %v", i, errs[i])
		}
		if digests[i] != digests[0] {
			t.Fatalf("digests differ: %v", digests)
		}
	}
	if names := snapshotNames(t, s); len(names) != 1 {
		t.Fatalf("snapshots %v, want one", names)
	}
	assertClean(t, s)
	rep, err := s.Verify(context.Background())
	if err != nil || len(rep.Bad) != 0 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

const helperEnv = "REASONIX_STORE_TEST_HELPER"

// TestMain doubles as the other processes of TestTwoProcessCommits: re-run
// with helperEnv set, the binary commits the shared content and exits.
func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helperProcess(dir, os.Getenv(helperEnv+"_GO")))
	}
	os.Exit(m.Run())
}

func processFiles() map[string]file {
	files := map[string]file{}
	for i := 0; i < 200; i++ {
		files[fmt.Sprintf("p/%02d/f%d", i%20, i)] = file{body: strings.Repeat("c", 100+i), exec: i%7 == 0}
	}
	return files
}

func helperProcess(dir, goFile string) int {
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	st, err := s.Stage()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := makeTree(st.Dir, processFiles()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Stage first, then wait for the go signal so the commits overlap.
	for deadline := time.Now().Add(20 * time.Second); !exists(goFile); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "no go signal")
			return 2
		}
	}
	d, err := s.Commit(context.Background(), st)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Print(d)
	return 0
}

func TestTwoProcessCommits(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "store")
	cleanStore(t, dir)
	goFile := filepath.Join(t.TempDir(), "go")
	const procs = 3
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"="+dir, helperEnv+"_GO="+goFile)
		cmd.Stdout = &outs[i]
		cmd.Stderr = &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v: %s", i, err, outs[i].String())
		}
	}
	want := digestOf(t, processFiles())
	for i := range outs {
		if outs[i].String() != want {
			t.Fatalf("process %d committed %q, want %s", i, outs[i].String(), want)
		}
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if names := snapshotNames(t, s); len(names) != 1 {
		t.Fatalf("snapshots %v, want one", names)
	}
	assertClean(t, s)
	rep, err := s.Verify(context.Background())
	if err != nil || rep.Checked != 1 || len(rep.Bad) != 0 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}
