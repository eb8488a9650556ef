package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"reasonix.io/plugind/internal/fakegithub"
)

// TestDegradedDisk (issue 9, finding 6): with the cache or the store
// unusable in each way a disk can make them (as root too: a file where a
// folder should be, a folder where the file should be, the immutable
// attribute), the commands that read or edit the registry work, saying once
// on stderr what is wrong; install and update print their normal JSON, and
// either work without the cache or refuse with a clear code. A refusal
// leaves the registry byte-identical, and nothing is ever written outside
// REASONIX_HOME.
func TestDegradedDisk(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name":"tools","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: a skill\n---\nbody\n",
	})
	const unavailable = "the cache is unavailable"
	cases := []struct {
		name    string
		breakIt func(t *testing.T, home string) bool
		// roWarn is the one warning read-only commands print ("" for none).
		roWarn string
		// installWarn is a warning install's JSON must carry.
		installWarn string
		// refused is the code of every plan (install, update) when the
		// store is unusable; "" when plans work.
		refused string
		// remoteRefused is the code of a remote install only.
		remoteRefused string
	}{
		{
			name: "cache folder is a file",
			breakIt: func(t *testing.T, home string) bool {
				must(t, os.RemoveAll(filepath.Join(home, "cache")))
				must(t, os.WriteFile(filepath.Join(home, "cache"), []byte("in the way"), 0o644))
				return true
			},
			roWarn: unavailable, installWarn: unavailable,
		},
		{
			name: "cache.db is a folder",
			breakIt: func(t *testing.T, home string) bool {
				db := filepath.Join(home, "cache", "cache.db")
				for _, s := range []string{"", "-wal", "-shm"} {
					must(t, os.RemoveAll(db+s))
				}
				must(t, os.MkdirAll(filepath.Join(db, "x"), 0o755))
				return true
			},
			roWarn: unavailable, installWarn: unavailable,
		},
		{
			name: "cache folder is read-only",
			breakIt: func(t *testing.T, home string) bool {
				return readOnly(t, filepath.Join(home, "cache"))
			},
			roWarn: unavailable, installWarn: unavailable,
		},
		{
			// It opens (read-only), so reads work and every write fails:
			// the operations still succeed and say the cache was bypassed.
			name: "cache.db is read-only",
			breakIt: func(t *testing.T, home string) bool {
				return readOnly(t, filepath.Join(home, "cache", "cache.db"))
			},
			installWarn: "the cache failed",
		},
		{
			name: "store is a file",
			breakIt: func(t *testing.T, home string) bool {
				must(t, removeAllWritable(filepath.Join(home, "store")))
				must(t, os.WriteFile(filepath.Join(home, "store"), []byte("in the way"), 0o644))
				return true
			},
			roWarn: "the snapshot store is unusable", installWarn: "the snapshot store is unusable",
			refused: "install.source_unreadable", remoteRefused: "install.source_unreadable",
		},
		{
			// The store opens, but nothing can be staged in it: local
			// folders (never staged there) still install, remote sources
			// are refused.
			name: "store staging is read-only",
			breakIt: func(t *testing.T, home string) bool {
				return readOnly(t, filepath.Join(home, "store", "staging"))
			},
			remoteRefused: "install.source_unreadable",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			env := gh.Env()
			src := copyDir(t, filepath.Join("..", "..", "examples", "hello-claude"), filepath.Join(t.TempDir(), "hello-claude"))
			other := writePluginNamed(t, filepath.Join(t.TempDir(), "other"), "other", "1.0.0")
			if r := sb.run(t, env, "plugin", "install", src, "--yes"); r.code != 0 {
				t.Fatalf("install before breaking: %d %s %s", r.code, r.stdout, r.stderr)
			}
			if !tc.breakIt(t, sb.home) {
				t.Skip("this file system cannot make a file read-only for root (no chattr); the other cases cover the behaviour")
			}

			// Read-only commands: exit 0, one warning at most, registry
			// untouched.
			reg := sb.registry(t)
			zipPath := filepath.Join(t.TempDir(), "out.zip")
			for _, args := range [][]string{
				{"plugin", "list"},
				{"plugin", "list", "--json"},
				{"plugin", "show", "hello-claude"},
				{"plugin", "doctor", "hello-claude"},
				{"doctor", "capabilities"},
				{"plugin", "export", "hello-claude", "-o", zipPath},
			} {
				r := sb.run(t, env, args...)
				if r.code != 0 {
					t.Fatalf("%v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
				}
				checkWarning(t, args, r.stderr, tc.roWarn)
				if got := sb.registry(t); got != reg {
					t.Fatalf("%v changed the registry", args)
				}
			}
			// Maintenance: about the store, so it needs one; without a
			// cache, stats and verify work and gc refuses to guess what is
			// in use.
			if tc.refused != "" {
				if r := sb.run(t, env, "cache", "stats"); r.code != 1 || !strings.Contains(r.stderr, "snapshot store") {
					t.Fatalf("cache stats with the store unusable: %d %s", r.code, r.stderr)
				}
			} else {
				for _, args := range [][]string{{"cache", "stats"}, {"cache", "verify"}} {
					if r := sb.run(t, env, args...); r.code != 0 {
						t.Fatalf("%v: %d %s %s", args, r.code, r.stdout, r.stderr)
					}
				}
				if tc.roWarn == unavailable {
					r := sb.run(t, env, "cache", "gc", "--all")
					if r.code != 1 || !strings.Contains(r.stderr, "nothing was evicted") {
						t.Fatalf("cache gc without a cache: %d %s %s", r.code, r.stdout, r.stderr)
					}
				}
			}
			if !strings.Contains(sb.run(t, env, "plugin", "list").stdout, "hello-claude") {
				t.Fatal("list lost the installed plugin")
			}
			if zip, err := os.ReadFile(zipPath); err != nil || !bytes.HasPrefix(zip, []byte("PK")) {
				t.Fatalf("export wrote no zip: %v", err)
			}
			for _, args := range [][]string{{"plugin", "disable", "hello-claude"}, {"plugin", "enable", "hello-claude"}} {
				r := sb.run(t, env, args...)
				if r.code != 0 {
					t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
				}
				checkWarning(t, args, r.stderr, tc.roWarn)
			}

			// Plans: normal JSON, either applied or refused with a code.
			expectPlan := func(args []string, refused string) {
				t.Helper()
				before := sb.registry(t)
				r := sb.run(t, env, args...)
				v := r.json(t)
				if refused == "" {
					if r.code != 0 || v["ok"] != true {
						t.Fatalf("%v: exit %d %s\n%s", args, r.code, r.stdout, r.stderr)
					}
				} else {
					if r.code != 1 || v["ok"] != false || v["errorCode"] != refused || v["error"] == "" {
						t.Fatalf("%v: exit %d, want a %s refusal: %s", args, r.code, refused, r.stdout)
					}
					if e, _ := v["error"].(string); !strings.Contains(e, "snapshot store") {
						t.Errorf("%v: the refusal does not say the store is the problem: %s", args, e)
					}
					if sb.registry(t) != before {
						t.Fatalf("%v was refused but changed the registry", args)
					}
				}
				if tc.installWarn != "" && !strings.Contains(strings.Join(stringsOf(v["warnings"]), "\n"), tc.installWarn) {
					t.Errorf("%v: JSON warnings %v lack %q", args, v["warnings"], tc.installWarn)
				}
				if strings.Contains(r.stdout, "(14)") || strings.Contains(r.stdout, "sqlite") {
					// A driver error may be quoted inside a warning, never
					// as the error itself.
					if e, _ := v["error"].(string); strings.Contains(e, "(14)") {
						t.Errorf("%v: bare driver error: %s", args, e)
					}
				}
			}
			expectPlan([]string{"plugin", "install", other, "--yes"}, tc.refused)
			remote := tc.remoteRefused
			expectPlan([]string{"plugin", "install", "git:github.com/acme/tools", "--yes"}, remote)
			expectPlan([]string{"plugin", "update", "hello-claude", "--dry-run"}, tc.refused)

			before := sb.registry(t)
			r := sb.run(t, env, "plugin", "remove", "hello-claude", "--yes")
			if r.code != 0 || r.json(t)["ok"] != true {
				t.Fatalf("remove: exit %d %s %s", r.code, r.stdout, r.stderr)
			}
			if sb.registry(t) == before || strings.Contains(sb.registry(t), `"hello-claude"`) {
				t.Fatal("remove did not take the plugin out of the registry")
			}
			if _, err := os.Stat(filepath.Join(sb.home, "plugins", "hello-claude")); !os.IsNotExist(err) {
				t.Fatalf("remove left the root: %v", err)
			}
			sb.assertNothingOutside(t)
		})
	}
}

// checkWarning: with want set, exactly one warning line, saying want;
// without, none.
func checkWarning(t *testing.T, args []string, stderr, want string) {
	t.Helper()
	lines := warningLines(stderr)
	switch {
	case want == "" && len(lines) != 0:
		t.Errorf("%v: unexpected warnings: %q", args, lines)
	case want != "" && (len(lines) != 1 || !strings.Contains(lines[0], want)):
		t.Errorf("%v: want one warning saying %q, got %q", args, want, lines)
	}
}

func stringsOf(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestCorruptCacheFromTheBinary (issue 9, finding 7): a cache.db that is
// garbage, truncated, or some other program's database is moved aside with a
// timestamp, rebuilt, and a warning says so, on stderr and in install's
// JSON; every command keeps working.
func TestCorruptCacheFromTheBinary(t *testing.T) {
	t.Parallel()
	damage := map[string]func(t *testing.T, db string){
		"garbage": func(t *testing.T, db string) {
			must(t, os.WriteFile(db, bytes.Repeat([]byte("garbage!"), 4096), 0o644))
		},
		"truncated": func(t *testing.T, db string) {
			info, err := os.Stat(db)
			must(t, err)
			must(t, os.Truncate(db, info.Size()/3))
		},
		"foreign database": func(t *testing.T, db string) {
			// A valid SQLite file some other program wrote: a table of its
			// own, no migration history.
			must(t, os.Remove(db))
			raw, err := sql.Open("sqlite", db)
			must(t, err)
			_, err = raw.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine')`)
			must(t, err)
			must(t, raw.Close())
		},
	}
	for name, damageIt := range damage {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			src := copyDir(t, filepath.Join("..", "..", "examples", "hello-claude"), filepath.Join(t.TempDir(), "hello-claude"))
			if r := sb.run(t, nil, "plugin", "install", src, "--yes"); r.code != 0 {
				t.Fatalf("install: %d %s", r.code, r.stderr)
			}
			db := filepath.Join(sb.home, "cache", "cache.db")
			for _, s := range []string{"-wal", "-shm"} {
				_ = os.Remove(db + s)
			}
			damageIt(t, db)
			damaged, err := os.ReadFile(db)
			must(t, err)
			reg := sb.registry(t)

			r := sb.run(t, nil, "plugin", "list")
			if r.code != 0 || !strings.Contains(r.stdout, "hello-claude") {
				t.Fatalf("list on a corrupt cache: %d %s %s", r.code, r.stdout, r.stderr)
			}
			checkWarning(t, []string{"list"}, r.stderr, "moved it aside to cache.db.corrupt-")
			aside, _ := filepath.Glob(db + ".corrupt-*Z")
			if len(aside) != 1 {
				t.Fatalf("moved-aside files: %v", aside)
			}
			if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, damaged) {
				t.Fatal("the corrupt database was not kept as it was")
			}
			if sb.registry(t) != reg {
				t.Fatal("the registry changed")
			}
			// Rebuilt: the next command is silent and plans are remembered.
			r = sb.run(t, nil, "plugin", "install", src, "--dry-run", "--replace")
			if r.code != 0 || len(warningLines(r.stderr)) != 0 {
				t.Fatalf("dry-run after the rebuild: %d %s %s", r.code, r.stdout, r.stderr)
			}

			// Corrupt again: install's JSON carries the warning too.
			damageIt(t, db)
			r = sb.run(t, nil, "plugin", "install", src, "--yes", "--replace")
			v := r.json(t)
			if r.code != 0 || v["ok"] != true {
				t.Fatalf("install on a corrupt cache: %d %s %s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(strings.Join(stringsOf(v["warnings"]), "\n"), "moved it aside") {
				t.Fatalf("install JSON warnings: %v", v["warnings"])
			}
			checkWarning(t, []string{"install"}, r.stderr, "moved it aside")
			for _, args := range [][]string{{"plugin", "show", "hello-claude"}, {"doctor", "capabilities"}, {"cache", "stats"}, {"cache", "verify"}} {
				if r := sb.run(t, nil, args...); r.code != 0 || len(warningLines(r.stderr)) != 0 {
					t.Fatalf("%v after recovery: %d %s %s", args, r.code, r.stdout, r.stderr)
				}
			}
			sb.assertNothingOutside(t)
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// removeAllWritable removes a tree holding read-only folders (a store).
func removeAllWritable(root string) error {
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(root)
}
