package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// stmts keeps the lookups' prepared statements: SQLite parses and plans a
// statement every time one is run unprepared, which was a tenth of the
// CPU of a warm bulk plan in the daemon (a few hundred lookups, a handful
// of distinct queries). database/sql prepares each again on any other
// connection it runs on, by itself.
type stmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func (db *DB) stmt(ctx context.Context, q string) *sql.Stmt {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if s, ok := db.stmts.m[q]; ok {
		return s
	}
	s, err := db.sql.PrepareContext(ctx, q)
	if err != nil {
		return nil // the query itself, unprepared, says what is wrong
	}
	if db.stmts.m == nil {
		db.stmts.m = map[string]*sql.Stmt{}
	}
	db.stmts.m[q] = s
	return s
}

// queryRow is db.sql.QueryRowContext through a prepared statement.
func (db *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if s := db.stmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return db.sql.QueryRowContext(ctx, q, args...)
}

// document reads the one blob column q selects, what (a plan, a
// marketplace document) stored under args: ok is false when none is
// stored, and a stored empty one is empty, not nil.
func (db *DB) document(ctx context.Context, what, q string, args ...any) ([]byte, bool, error) {
	var doc []byte
	err := db.queryRow(ctx, q, args...).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, db.readFailed(ctx, fmt.Errorf("cache: get %s: %w", what, err))
	}
	if doc == nil {
		doc = []byte{}
	}
	return doc, true, nil
}

// query is db.sql.QueryContext through a prepared statement.
func (db *DB) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s := db.stmt(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return db.sql.QueryContext(ctx, q, args...)
}

func (db *DB) closeStmts() {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	for _, s := range db.stmts.m {
		_ = s.Close()
	}
	db.stmts.m = nil
}
