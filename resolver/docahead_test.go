package resolver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// sourceOnly is a repository known by its source alone.
type sourceOnly struct {
	host.Repo
	src source.Source
}

func (r sourceOnly) Source() source.Source { return r.src }

// TestParseAhead: the document cached at the commit a ref was last pinned
// to is parsed beside the pin, and taken for exactly those bytes at that
// key and commit; nothing is parsed ahead for a commit, without a cache
// or in the daemon.
func TestParseAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := cache.OpenWith(ctx, filepath.Join(t.TempDir(), "cache.db"), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	src, err := source.Parse("https://github.com/acme/market")
	if err != nil {
		t.Fatal(err)
	}
	sha, moved := strings.Repeat("a", 40), strings.Repeat("b", 40)
	key := src.Key() + "/.claude-plugin/marketplace.json"
	doc := []byte(`{"name":"acme","owner":{"name":"Acme"},"plugins":[{"name":"p","source":"./p"}]}`)
	if err := db.PutRef(ctx, cache.Ref{Remote: src.Key(), Ref: host.HeadRef, SHA: sha, ResolvedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s := db.Session()
	s.PutMarketplace(key, sha, doc)
	if err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	r := &resolve{Sources: New(Config{Cache: db}), cache: db.Session()}
	a := r.parseAhead(ctx, sourceOnly{src: src}, src, marketplace.Options{})
	if m, ok, err := a.parsed(key, sha, doc); !ok || err != nil || m.Name != "acme" {
		t.Fatalf("the cached bytes: %+v, %v, %v", m, ok, err)
	}
	for name, c := range map[string]struct {
		key, sha string
		data     []byte
	}{
		"moved ref":     {key, moved, doc},
		"other bytes":   {key, sha, append([]byte(" "), doc...)},
		"other folder":  {src.Key() + "/sub/.claude-plugin/marketplace.json", sha, doc},
		"codex's place": {src.Key() + "/" + marketplace.CodexDocument.Path, sha, doc},
	} {
		if _, ok, _ := a.parsed(c.key, c.sha, c.data); ok {
			t.Errorf("%s: taken", name)
		}
	}
	if a := r.parseAhead(ctx, sourceOnly{src: src}, src.At(sha), marketplace.Options{}); a != nil {
		t.Error("parsed ahead for a commit")
	}
	if a := (&resolve{Sources: New(Config{})}).parseAhead(ctx, sourceOnly{src: src}, src, marketplace.Options{}); a != nil {
		t.Error("parsed ahead without a cache")
	}
	r.cfg.Decoded = cache.NewDecoded(8)
	if a := r.parseAhead(ctx, sourceOnly{src: src}, src, marketplace.Options{}); a != nil {
		t.Error("parsed ahead in the daemon")
	}
}
