package meta_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for goose
	"github.com/pressly/goose/v3"

	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/meta/migrations"
)

// An audit entry is stored whatever bytes its fields hold: NUL and bytes
// that are not UTF-8 are spelled \xNN, an over-long repository is cut (it
// is indexed), and valid text is kept as it is.
func TestAuditStoresAnyBytes(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	long := strings.Repeat("é", 3000)
	e := meta.Entry{Client: "c\x00", Replica: "r\xff", Action: "snapshot", Repo: "https://github.com/a/\xffb" + long, Ref: "ma\x00in",
		SHA: "\xc3", Paths: "plugins/\xfe\nplugins/ok", Outcome: "error", Detail: "détail \x00 \xff", Digest: ""}
	if err := db.Audit(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, err := db.AuditLog(ctx, meta.AuditFilter{})
	if err != nil || len(got) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	g := got[0]
	if g.Client != `c\x00` || g.Replica != `r\xff` || g.Ref != `ma\x00in` || g.SHA != `\xc3` || g.Paths != "plugins/\\xfe\nplugins/ok" || g.Detail != `détail \x00 \xff` {
		t.Fatalf("stored %+v", g)
	}
	if !strings.HasPrefix(g.Repo, `https://github.com/a/\xffbé`) || len(g.Repo) > meta.MaxKey || !strings.HasSuffix(g.Repo, "…") {
		t.Fatalf("repository stored as %d bytes: %.60q…", len(g.Repo), g.Repo)
	}
	for _, s := range []string{"plain", "", "ünïcode ✓", "tab\tand\nnewline"} {
		if meta.Text(s) != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, meta.Text(s))
		}
	}
}

// Every failure of the database is marked ErrDatabase, so the mirror
// answers it without its details.
func TestDatabaseErrorsAreMarked(t *testing.T) {
	t.Parallel()
	db := open(t)
	db.Close()
	ctx := context.Background()
	_, _, err1 := db.GetRef(ctx, "github.com/o/r", "main")
	err2 := db.Audit(ctx, meta.Entry{Action: "refs", Outcome: "hit"})
	_, _, _, err3 := db.Marketplace(ctx, "github.com/o/r", strings.Repeat("a", 40), "")
	for i, err := range []error{err1, err2, err3} {
		if err == nil || !errors.Is(err, meta.ErrDatabase) {
			t.Errorf("operation %d on a closed database: %v, want it marked ErrDatabase", i, err)
		}
	}
}

// A snapshot of a folder list of any length is stored and found again (the
// list is keyed by its digest), and migrating a database made by the first
// schema keeps its snapshots.
func TestSnapshotsOfLongFolderLists(t *testing.T) {
	t.Parallel()
	dsn := mirrortest.Postgres(t)
	ctx := context.Background()
	sqlDB, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	const repo, sha = "github.com/o/r", "cccccccccccccccccccccccccccccccccccccccc"
	digest := "sha256:" + strings.Repeat("ab", 32)
	if _, err := sqlDB.ExecContext(ctx, `INSERT INTO objects (digest, size, archive_sha256, files, bytes) VALUES ($1, 1, '', 1, 1)`, digest); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.ExecContext(ctx, `INSERT INTO snapshots (repo, sha, paths, digest) VALUES ($1, $2, 'plugins/a', $3)`, repo, sha, digest); err != nil {
		t.Fatal(err)
	}
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Kept by migration 00002; read as absent since 00005 (its submodules
	// are not recorded) until it is stored again.
	if _, ok, err := db.Snapshot(ctx, repo, sha, "plugins/a"); ok || err != nil {
		t.Fatalf("a snapshot recorded before submodules were: found (%v)", err)
	}
	if err := db.PutSnapshot(ctx, repo, sha, "plugins/a", meta.Object{Digest: digest}, nil); err != nil {
		t.Fatal(err)
	}
	if o, ok, err := db.Snapshot(ctx, repo, sha, "plugins/a"); !ok || err != nil || o.Digest != digest {
		t.Fatalf("a snapshot recorded before the migrations, stored again: %+v %v %v", o, ok, err)
	}
	var paths []string
	for i := range 300 {
		paths = append(paths, fmt.Sprintf("plugins/%x", sha256.Sum256([]byte{byte(i), byte(i >> 8)})))
	}
	long := strings.Join(paths, "\n") // ~22 kB, incompressible
	if err := db.PutSnapshot(ctx, repo, sha, long, meta.Object{Digest: digest}, nil); err != nil {
		t.Fatal(err)
	}
	if o, ok, err := db.Snapshot(ctx, repo, sha, long); !ok || err != nil || o.Digest != digest {
		t.Fatalf("%+v %v %v", o, ok, err)
	}
	if _, ok, _ := db.Snapshot(ctx, repo, sha, long+"x"); ok {
		t.Fatal("another folder list found the snapshot")
	}
}
