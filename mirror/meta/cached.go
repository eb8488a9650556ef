package meta

import (
	"context"
	"time"

	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/secrets"
)

// DB is the store of the mirror's host.Cached layer (a host.MetaStore):
// what upstream said about refs, reachability and things that do not
// exist, shared by every replica. Times are the database's, so replicas
// whose clocks disagree still agree on what is fresh and what expired: a
// write keeps only the TTL its times span, and a read is turned into this
// process's clock by its age.

// since is the local time age seconds ago, by the database's clock.
func since(age float64) time.Time { return time.Now().Add(-time.Duration(age * float64(time.Second))) }

// GetRef implements host.MetaStore: ResolvedAt is when upstream last
// answered for the ref (gave it or confirmed it).
func (d *DB) GetRef(ctx context.Context, repo, ref string) (cache.Ref, bool, error) {
	r := cache.Ref{Remote: repo, Ref: ref}
	var age float64
	ok, err := d.row(ctx, "read ref "+ref+" of "+repo, `SELECT sha, etag, extract(epoch FROM now() - checked_at)
		FROM refs WHERE repo = $1 AND ref = $2`, []any{repo, ref}, &r.SHA, &r.ETag, &age)
	r.ResolvedAt = since(age)
	return r, ok, err
}

// PutRef implements host.MetaStore: a new SHA moves resolved_at, a
// confirmed one only checked_at. The ETag is upstream's bytes, made
// storable.
func (d *DB) PutRef(ctx context.Context, r cache.Ref) error {
	return d.exec(ctx, "record ref "+r.Ref+" of "+r.Remote, `INSERT INTO refs (repo, ref, sha, etag, resolved_at, checked_at)
		VALUES ($1, $2, $3, $4, now(), now())
		ON CONFLICT (repo, ref) DO UPDATE SET
			resolved_at = CASE WHEN refs.sha = EXCLUDED.sha THEN refs.resolved_at ELSE now() END,
			sha = EXCLUDED.sha,
			etag = CASE WHEN EXCLUDED.etag = '' AND refs.sha = EXCLUDED.sha THEN refs.etag ELSE EXCLUDED.etag END,
			checked_at = now()`, r.Remote, r.Ref, r.SHA, Text(r.ETag))
}

// ListRefs implements host.MetaStore: the last listing of repo, every ref
// of it as old as the listing.
func (d *DB) ListRefs(ctx context.Context, repo string) ([]cache.Ref, error) {
	var commits map[string]string
	var age float64
	ok, err := d.row(ctx, "read the refs of "+repo, `SELECT commits, extract(epoch FROM now() - checked_at)
		FROM ref_lists WHERE repo = $1`, []any{repo}, &commits, &age)
	if !ok {
		return nil, err
	}
	out := make([]cache.Ref, 0, len(commits))
	for name, sha := range commits {
		out = append(out, cache.Ref{Remote: repo, Ref: name, SHA: sha, ResolvedAt: since(age)})
	}
	return out, nil
}

// ReplaceRefs implements host.MetaStore. Names are upstream's bytes, made
// storable (jsonb refuses NUL as json.Marshal spells it); the default
// branch's name (PutRefHead) is kept.
func (d *DB) ReplaceRefs(ctx context.Context, repo string, commits map[string]string, _ time.Time) error {
	stored := make(map[string]string, len(commits))
	for name, sha := range commits {
		stored[Text(name)] = Text(sha)
	}
	return d.exec(ctx, "record the refs of "+repo, `INSERT INTO ref_lists (repo, head, commits, checked_at) VALUES ($1, '', $2, now())
		ON CONFLICT (repo) DO UPDATE SET commits = EXCLUDED.commits, checked_at = now()`, repo, stored)
}

// PutRefHead records the name of repo's default branch beside its listing,
// which a host.MetaStore keeps without it.
func (d *DB) PutRefHead(ctx context.Context, repo, head string) error {
	return d.exec(ctx, "record the default branch of "+repo, `UPDATE ref_lists SET head = $2 WHERE repo = $1`, repo, Text(head))
}

// RefHead returns the name of repo's default branch ("" when unknown).
func (d *DB) RefHead(ctx context.Context, repo string) (head string, err error) {
	_, err = d.row(ctx, "read the default branch of "+repo, `SELECT head FROM ref_lists WHERE repo = $1`, []any{repo}, &head)
	return head, err
}

// GetVerdict implements host.MetaStore.
func (d *DB) GetVerdict(ctx context.Context, repo, sha string) (cache.Verdict, bool, error) {
	v := cache.Verdict{Remote: repo, SHA: sha}
	var age float64
	ok, err := d.row(ctx, "read the verdict on "+repo+"@"+sha, `SELECT reachable, extract(epoch FROM now() - checked_at)
		FROM verdicts WHERE repo = $1 AND sha = $2`, []any{repo, sha}, &v.Reachable, &age)
	v.CheckedAt = since(age)
	return v, ok, err
}

// PutVerdict implements host.MetaStore. A commit on a branch or tag stays
// in its history: that verdict is never replaced.
func (d *DB) PutVerdict(ctx context.Context, v cache.Verdict) error {
	return d.exec(ctx, "record the verdict on "+v.Remote+"@"+v.SHA, `INSERT INTO verdicts (repo, sha, reachable, checked_at)
		VALUES ($1, $2, $3, now())
		ON CONFLICT (repo, sha) DO UPDATE SET reachable = EXCLUDED.reachable, checked_at = now()
		WHERE NOT verdicts.reachable`, v.Remote, v.SHA, v.Reachable)
}

// FirstNegative implements host.MetaStore in one query; what expired is
// told by the database's clock, not now.
func (d *DB) FirstNegative(ctx context.Context, repo string, _ time.Time, keys ...cache.NegativeKey) (cache.Negative, bool, error) {
	kinds := make([]string, len(keys))
	shas := make([]string, len(keys))
	paths := make([]string, len(keys))
	for i, k := range keys {
		kinds[i], shas[i], paths[i] = k.Kind, k.SHA, pathKey(k.Path)
	}
	n := cache.Negative{Remote: repo}
	var age, ttl float64
	ok, err := d.row(ctx, "read negative results of "+repo, `SELECT n.kind, n.key, n.path, n.code, n.message,
			extract(epoch FROM now() - n.created_at), extract(epoch FROM n.expires_at - n.created_at)
		FROM negatives n JOIN unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS w(kind, key, path_key, ord)
			ON n.kind = w.kind AND n.key = w.key AND n.path_key = w.path_key
		WHERE n.repo = $1 AND n.expires_at > now()
		ORDER BY w.ord LIMIT 1`, []any{repo, kinds, shas, paths}, &n.Kind, &n.SHA, &n.Path, &n.Code, &n.Message, &age, &ttl)
	n.Created = since(age)
	n.Expires = n.Created.Add(time.Duration(ttl * float64(time.Second)))
	return n, ok, err
}

// PutNegative implements host.MetaStore: remembered for as long as
// n.Created to n.Expires spans. Its message may quote upstream's bytes, a
// URL with credentials included: it is masked and made storable.
func (d *DB) PutNegative(ctx context.Context, n cache.Negative) error {
	return d.exec(ctx, "record a negative result for "+n.Remote, `INSERT INTO negatives
			(kind, repo, key, path, path_key, code, message, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now() + make_interval(secs => $8))
		ON CONFLICT (kind, repo, key, path_key) DO UPDATE SET code = EXCLUDED.code, message = EXCLUDED.message,
			created_at = now(), expires_at = EXCLUDED.expires_at`,
		n.Kind, n.Remote, Text(n.SHA), Text(n.Path), pathKey(n.Path), n.Code, clip(Text(secrets.Mask(n.Message)), maxDetail),
		n.Expires.Sub(n.Created).Seconds())
}

// pathKey is the negatives table's key for a path: "" for none, else its
// SHA-256, so a folder list of any length fits the primary key's index.
func pathKey(path string) string {
	if path == "" {
		return ""
	}
	return hashKey(path)
}

// Count implements host.MetaStore: the mirror counts hits and misses per
// request, by outcome, in its metrics (reasonix_mirror_cache_total).
func (d *DB) Count(context.Context, string, bool) error { return nil }
