package meta

import (
	"context"
	"maps"
	"slices"
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

// GitTree returns the git tree id of folder path of repo at sha ("" the
// root), "" when none is recorded.
func (d *DB) GitTree(ctx context.Context, repo, sha, path string) (string, error) {
	var id string
	_, err := d.row(ctx, "read the git tree of "+repo+"@"+sha, `SELECT tree FROM git_trees
		WHERE repo = $1 AND sha = $2 AND path_key = $3 AND path = $4`,
		[]any{repo, sha, hashKey(path), path}, &id)
	return id, err
}
