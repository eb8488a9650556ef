package cache

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"reasonix.io/plugind"
)

// submodulesOf returns the submodules recorded for each of ats, sorted
// by path: every one of ats is in the result, with none when none are.
func (db *DB) submodulesOf(ctx context.Context, ats []RepoAt) (map[RepoAt][]plugind.Submodule, error) {
	out := make(map[RepoAt][]plugind.Submodule, len(ats))
	for _, at := range ats {
		out[at] = nil
	}
	err := readIn(ctx, db, fmt.Sprintf("submodules of %d repositories", len(ats)), ats, RepoAt.params, `SELECT remote, sha, path, url, commit_sha FROM submodules WHERE (remote, sha) IN`, func(rows *sql.Rows) error {
		var at RepoAt
		var s plugind.Submodule
		if err := rows.Scan(&at.Remote, &at.SHA, &s.Path, &s.URL, &s.Commit); err != nil {
			return err
		}
		if _, ok := out[at]; ok {
			out[at] = append(out[at], s)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, subs := range out {
		sort.Slice(subs, func(i, j int) bool { return subs[i].Path < subs[j].Path })
	}
	return out, nil
}
