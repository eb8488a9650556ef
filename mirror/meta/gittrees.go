package meta

import (
	"context"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
)

// PutGitTrees records the git tree ids of folders of repo at sha (path ""
// the root), as a fetch that proved them named them (migration 00007). An
// id recorded once stays: a commit's trees never change.
func (d *DB) PutGitTrees(ctx context.Context, repo, sha string, trees map[string]string) error {
	if len(trees) == 0 {
		return nil
	}
	paths := slices.Sorted(maps.Keys(trees))
	keys, ids := make([]string, len(paths)), make([]string, len(paths))
	for i, p := range paths {
		keys[i], ids[i] = hashKey(p), trees[p]
	}
	return d.exec(ctx, "record the git trees of "+repo+"@"+sha, `INSERT INTO git_trees (repo, sha, path_key, path, tree)
		SELECT $1, $2, k, p, t FROM unnest($3::text[], $4::text[], $5::text[]) AS x(k, p, t)
		ON CONFLICT (repo, sha, path_key) DO NOTHING`, repo, sha, keys, paths, ids)
}

// GitTrees returns the git tree ids recorded of folders paths of repo at
// sha ("" the root), by path; a folder with none recorded is left out.
func (d *DB) GitTrees(ctx context.Context, repo, sha string, paths []string) (map[string]string, error) {
	keys := make([]string, len(paths))
	for i, p := range paths {
		keys[i] = hashKey(p)
	}
	rows, _ := d.pool.Query(ctx, `SELECT path, tree FROM git_trees WHERE repo = $1 AND sha = $2 AND path_key = ANY($3)`, repo, sha, keys)
	out := map[string]string{}
	var p, id string
	if _, err := pgx.ForEachRow(rows, []any{&p, &id}, func() error { out[p] = id; return nil }); err != nil {
		return nil, dbErr("read the git trees of %s@%s: %w", repo, sha, err)
	}
	return out, nil
}
