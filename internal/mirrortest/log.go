package mirrortest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/mirror/meta"
)

// FleetLogHoldsEachOnce checks the checksum log in db against what a fleet
// installed from bulkmarket.Fleet(gh, owner, …): one record per installed
// plugin (name → digest), each of the plugin's folder at its repository's
// head with the digest the machines installed and the folder's git tree
// id (the mirror fetched from the fake, which proves both transports'
// trees), no key logged twice and
// nothing else logged (the marketplace's own tree is not a record). It
// returns how many records the log holds.
func FleetLogHoldsEachOnce(ctx context.Context, db *meta.DB, gh *fakegithub.Server, owner string, repos int, installed map[string]string) (int64, error) {
	want := map[string]checksumlog.Record{} // by key
	for name, digest := range installed {
		var r int
		if _, err := fmt.Sscanf(name, "p%03d-", &r); err != nil || r >= repos {
			return 0, fmt.Errorf("plugin %q is not one of bulkmarket.Fleet's", name)
		}
		repo := gh.Repo(owner, fmt.Sprintf("repo%02d", r))
		rec := checksumlog.Record{Place: "github.com/" + owner + "/" + repo.Name, Path: "plugins/" + name, Commit: repo.Head("main"), Digest: digest}
		rec.GitTree = repo.TreeID(rec.Commit, rec.Path)
		want[rec.Key()] = rec
	}
	tree, err := db.LogTree(ctx)
	if err != nil {
		return 0, err
	}
	var errs []error
	if tree.N != int64(len(want)) {
		errs = append(errs, fmt.Errorf("the log holds %d records, want %d (one per installed plugin)", tree.N, len(want)))
	}
	seen := map[string]int64{}
	for first := int64(0); first < tree.N; first += 256 {
		texts, err := db.LogRecords(ctx, first, min(256, tree.N-first))
		if err != nil {
			return tree.N, err
		}
		for i, text := range texts {
			id := first + int64(i)
			rec, err := checksumlog.ParseRecord(text)
			if err != nil {
				return tree.N, fmt.Errorf("record %d: %w", id, err)
			}
			key := rec.Key()
			if was, dup := seen[key]; dup {
				errs = append(errs, fmt.Errorf("%s is logged twice: records %d and %d", key, was, id))
			}
			seen[key] = id
			switch w, ok := want[key]; {
			case !ok:
				errs = append(errs, fmt.Errorf("record %d is of %s, which no machine installed", id, key))
			case rec.Digest != w.Digest:
				errs = append(errs, fmt.Errorf("record %d: %s logged with %s, the machines installed %s", id, key, rec.Digest, w.Digest))
			case rec.GitTree != w.GitTree:
				errs = append(errs, fmt.Errorf("record %d: %s logged with git tree %q, the commit's is %s", id, key, rec.GitTree, w.GitTree))
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		if _, ok := seen[key]; !ok {
			errs = append(errs, fmt.Errorf("%s was installed but is not in the log", key))
		}
	}
	return tree.N, errors.Join(errs...)
}
