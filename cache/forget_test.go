package cache

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestForgetDigest(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	root, sub, other, otherSub := d("a"), d("b"), d("c"), d("e")
	must(t, db.putSnapshot(ctx, "github.com/o/r", "sha1", "", root))
	must(t, db.putSnapshot(ctx, "github.com/o/r", "sha1", "/", root))
	must(t, db.putSnapshot(ctx, "github.com/o/r", "sha1", "/plug", sub))
	must(t, db.putSnapshot(ctx, "github.com/o/other", "sha2", "", other))
	must(t, db.putSnapshot(ctx, "github.com/o/other", "sha2", "/plug", otherSub))
	must(t, db.putInventory(ctx, "manifest/v1\x00"+sub+"\x00\x00plug", []byte("{}")))
	must(t, db.putInventory(ctx, "manifest/v1\x00"+root+"\x00\x00", []byte("{}")))
	must(t, db.putInventory(ctx, "manifest/v1\x00"+otherSub+"\x00\x00plug", []byte("{}")))
	must(t, db.touchSnapshot(ctx, root, time.Now()))
	must(t, db.touchSnapshot(ctx, other, time.Now()))

	must(t, db.ForgetDigest(ctx, root))

	has := func(remote, sha, subdir string) bool {
		_, ok, err := db.getSnapshot(ctx, remote, sha, subdir)
		must(t, err)
		return ok
	}
	hasInv := func(key string) bool {
		_, ok, err := db.getInventory(ctx, key)
		must(t, err)
		return ok
	}
	if !has("github.com/o/r", "sha1", "") {
		t.Error("the whole-tree row, which names what a fresh fetch must hash to, was dropped")
	}
	if has("github.com/o/r", "sha1", "/") || has("github.com/o/r", "sha1", "/plug") {
		t.Error("subdirectory digests hashed from the damaged tree survive")
	}
	if hasInv("manifest/v1\x00"+sub+"\x00\x00plug") || hasInv("manifest/v1\x00"+root+"\x00\x00") {
		t.Error("inventories read from the damaged tree survive")
	}
	if !has("github.com/o/other", "sha2", "/plug") || !hasInv("manifest/v1\x00"+otherSub+"\x00\x00plug") {
		t.Error("another snapshot's rows were dropped")
	}
	uses, err := db.SnapshotUses(ctx)
	must(t, err)
	if _, ok := uses[root]; ok {
		t.Error("use time of the forgotten snapshot survives")
	}
	if _, ok := uses[other]; !ok {
		t.Error("use time of another snapshot was dropped")
	}
	if err := db.ForgetDigest(ctx, ""); err == nil {
		t.Error("empty digest accepted")
	}
}
