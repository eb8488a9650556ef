package cache

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seeded returns the path of a healthy cache holding one plan (so it has
// real pages to damage), closed.
func seeded(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cache", "cache.db")
	db, err := OpenWith(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		must(t, db.PutPlan(context.Background(), "p"+strings.Repeat("x", i), bytes.Repeat([]byte("body"), 400), []string{"d"}))
	}
	must(t, db.Close())
	return path
}

// rawExec runs SQL on the file without migrations, as another program would.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestCorruptCacheIsMovedAside: every way the file's content can be bad
// ends with the file (and its -wal/-shm) under a .corrupt-<UTC time> name,
// an empty working cache in its place, and a warning saying so.
func TestCorruptCacheIsMovedAside(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"garbage", func(t *testing.T, path string) {
			must(t, os.WriteFile(path, bytes.Repeat([]byte("not a database "), 2000), 0o644))
		}},
		{"truncated", func(t *testing.T, path string) {
			info, err := os.Stat(path)
			must(t, err)
			must(t, os.Truncate(path, info.Size()/2))
		}},
		{"header only", func(t *testing.T, path string) {
			must(t, os.Truncate(path, 50))
		}},
		{"foreign schema", func(t *testing.T, path string) {
			must(t, os.Remove(path))
			rawExec(t, path, `CREATE TABLE refs (id INTEGER PRIMARY KEY, note TEXT)`)
		}},
		{"version table without the tables", func(t *testing.T, path string) {
			rawExec(t, path, `DROP TABLE inventories`)
		}},
		{"column missing", func(t *testing.T, path string) {
			rawExec(t, path, `ALTER TABLE refs DROP COLUMN etag`)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := seeded(t)
			tc.damage(t, path)
			damaged, err := os.ReadFile(path)
			must(t, err)

			db, err := OpenWith(context.Background(), path, Options{Now: func() time.Time { return at }})
			if err != nil {
				t.Fatalf("Open of a corrupt cache failed instead of repairing: %v", err)
			}
			defer db.Close()
			aside := path + ".corrupt-20260506T070809Z"
			w := db.Warnings()
			if len(w) != 1 || !strings.Contains(w[0], "moved it aside to "+filepath.Base(aside)) {
				t.Fatalf("warnings = %q", w)
			}
			got, err := os.ReadFile(aside)
			if err != nil || !bytes.Equal(got, damaged) {
				t.Fatalf("damaged file not kept byte-for-byte at %s: %v", aside, err)
			}
			// The new cache is empty and works.
			if _, ok, err := db.GetPlan(context.Background(), "p"); err != nil || ok {
				t.Fatalf("fresh cache lookup: ok=%v err=%v", ok, err)
			}
			must(t, db.PutRef(context.Background(), Ref{Remote: "r", Ref: "main", SHA: "s"}))
			if n, _, last := db.Failures(); n != 0 {
				t.Fatalf("fresh cache failed %d times: %v", n, last)
			}
		})
	}
}

// TestMoveAsideTakesWALAndIndex: the -wal and -shm of a database travel
// with it, so SQLite never replays an old WAL into a new database.
func TestMoveAsideTakesWALAndIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cache.db")
	for _, s := range []string{"", "-wal", "-shm"} {
		must(t, os.WriteFile(path+s, []byte("old"+s), 0o644))
	}
	aside, err := moveAside(path, time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))
	must(t, err)
	if filepath.Base(aside) != "cache.db.corrupt-20260102T020405Z" {
		t.Fatalf("moved to %s, want a UTC stamp", aside)
	}
	for _, s := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(aside + s); err != nil || string(b) != "old"+s {
			t.Errorf("%q not moved along: %v", s, err)
		}
		if _, err := os.Lstat(path + s); err == nil {
			t.Errorf("%q still in place", s)
		}
	}
}

// TestCorruptTwiceInOneSecond keeps both damaged files.
func TestCorruptTwiceInOneSecond(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "cache.db")
	for i := 0; i < 2; i++ {
		must(t, os.WriteFile(path, bytes.Repeat([]byte{byte('a' + i)}, 4096), 0o644))
		db, err := OpenWith(context.Background(), path, Options{Now: func() time.Time { return at }})
		must(t, err)
		must(t, db.Close())
	}
	for _, name := range []string{"cache.db.corrupt-20260506T070809Z", "cache.db.corrupt-20260506T070809Z-2"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestUnusableCacheIsNotMoved: what is wrong with the place rather than the
// content fails Open, and nothing is renamed.
func TestUnusableCacheIsNotMoved(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string
	}{
		{"cache folder is a file", func(t *testing.T, dir string) string {
			must(t, os.WriteFile(filepath.Join(dir, "cache"), []byte("x"), 0o644))
			return filepath.Join(dir, "cache", "cache.db")
		}},
		{"database is a directory", func(t *testing.T, dir string) string {
			must(t, os.MkdirAll(filepath.Join(dir, "cache", "cache.db"), 0o755))
			return filepath.Join(dir, "cache", "cache.db")
		}},
		{"newer schema", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "cache.db")
			rawExec(t, path,
				`CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')))`,
				`INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, 1), (1, 1), (2, 1), (99, 1)`,
				`CREATE TABLE refs (remote TEXT, other TEXT)`)
			return path
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := tc.setup(t, dir)
			before := listTree(t, dir)
			db, err := OpenWith(context.Background(), path, Options{})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), "open cache") {
				t.Errorf("error does not say what failed: %v", err)
			}
			after := listTree(t, dir)
			for p := range before {
				if !after[p] {
					t.Errorf("%s was moved or removed", p)
				}
			}
			for p := range after {
				if strings.Contains(p, ".corrupt-") {
					t.Errorf("%s: an unusable (not corrupt) cache was moved aside", p)
				}
			}
		})
	}
}

// A newer reasonix's cache that still has everything this one reads is used
// as is, never migrated down or moved.
func TestNewerCompatibleSchemaIsUsed(t *testing.T) {
	t.Parallel()
	path := seeded(t)
	rawExec(t, path, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, 1)`, `CREATE TABLE future (x)`)
	db, err := OpenWith(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if len(db.Warnings()) != 0 {
		t.Fatalf("warnings: %q", db.Warnings())
	}
	if _, ok, err := db.GetPlan(context.Background(), "p"); err != nil || !ok {
		t.Fatalf("plan written before is gone: ok=%v err=%v", ok, err)
	}
}

func listTree(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = true
		return nil
	})
	must(t, err)
	return out
}
