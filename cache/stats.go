package cache

import (
	"context"
	"database/sql"
	"fmt"
)

// Counter kinds used by the resolver and installer. Count accepts any
// kind; these four also report their table's row count in Stats.
const (
	KindRef         = "ref"
	KindSnapshot    = "snapshot"
	KindMarketplace = "marketplace"
	KindPlan        = "plan"
)

// kindTables pairs each table kind with the table whose rows it counts.
// Table names are constants here, never caller input, so formatting them
// into SQL is safe.
var kindTables = [...][2]string{
	{KindRef, "refs"},
	{KindSnapshot, "snapshots"},
	{KindMarketplace, "marketplaces"},
	{KindPlan, "plans"},
}

// HitMiss is one kind's lookup statistics. Rate is Hits/(Hits+Misses), 0
// when there were no lookups. Rows is how many entries of that kind the
// cache holds (0 for kinds without a table).
type HitMiss struct {
	Hits, Misses int64
	Rate         float64
	Rows         int64
}

// Stats returns hit/miss counts per kind, and row counts, for every counted
// kind and always for the four table kinds (ref, snapshot, marketplace,
// plan).
func (db *DB) Stats(ctx context.Context) (map[string]HitMiss, error) {
	db.settle()
	out := make(map[string]HitMiss)
	// One read transaction, so counters and row counts are one snapshot.
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("cache: stats: %w", err)
	}
	defer tx.Rollback()
	err = eachRow(ctx, tx.QueryContext, `SELECT kind, hits, misses FROM counters`, nil, func(rows *sql.Rows) error {
		var k string
		var hm HitMiss
		if err := rows.Scan(&k, &hm.Hits, &hm.Misses); err != nil {
			return err
		}
		if total := hm.Hits + hm.Misses; total > 0 {
			hm.Rate = float64(hm.Hits) / float64(total)
		}
		out[k] = hm
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cache: stats: %w", err)
	}
	for _, kt := range kindTables {
		kind, table := kt[0], kt[1]
		hm := out[kind]
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&hm.Rows); err != nil {
			return nil, fmt.Errorf("cache: stats: count %s: %w", table, err)
		}
		out[kind] = hm
	}
	return out, nil
}
