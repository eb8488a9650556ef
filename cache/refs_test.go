package cache

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestReplaceRefs: a listing replaces the remembered one — refs no longer
// advertised are forgotten (an offline plan must not pick a deleted tag),
// a ref whose commit is unchanged keeps its ETag and time, a moved one
// takes the new commit and loses its ETag — and other remotes are left
// alone.
func TestReplaceRefs(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	sha := func(c string) string { return strings.Repeat(c, 40) }
	t0, t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range []Ref{
		{Remote: "r", Ref: "HEAD", SHA: sha("a"), ETag: `"etag-head"`, ResolvedAt: t0},
		{Remote: "r", Ref: "p--v1.0.0", SHA: sha("b"), ResolvedAt: t0},
		{Remote: "r", Ref: "p--v2.0.0", SHA: sha("c"), ETag: `"etag-2"`, ResolvedAt: t0},
		{Remote: "other", Ref: "main", SHA: sha("d"), ResolvedAt: t0},
	} {
		if err := db.PutRef(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.ReplaceRefs(ctx, "r", map[string]string{"HEAD": sha("a"), "p--v1.0.0": sha("e"), "p--v1.1.0": sha("f")}, t1); err != nil {
		t.Fatal(err)
	}
	refs, err := db.ListRefs(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Ref{}
	for _, r := range refs {
		got[r.Ref] = r
	}
	want := map[string]Ref{
		"HEAD":      {Remote: "r", Ref: "HEAD", SHA: sha("a"), ETag: `"etag-head"`, ResolvedAt: t0},
		"p--v1.0.0": {Remote: "r", Ref: "p--v1.0.0", SHA: sha("e"), ResolvedAt: t1},
		"p--v1.1.0": {Remote: "r", Ref: "p--v1.1.0", SHA: sha("f"), ResolvedAt: t1},
	}
	for k, w := range want {
		if g := got[k]; g.SHA != w.SHA || g.ETag != w.ETag || !g.ResolvedAt.Equal(w.ResolvedAt) {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("refs of r: %v, want %v", reflect.ValueOf(got).MapKeys(), reflect.ValueOf(want).MapKeys())
	}
	if other, _ := db.ListRefs(ctx, "other"); len(other) != 1 {
		t.Errorf("another remote's refs: %+v", other)
	}
	if err := db.ReplaceRefs(ctx, "", nil, t1); err == nil {
		t.Error("ReplaceRefs without a remote succeeded")
	}
}
