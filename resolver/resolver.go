// Package resolver turns a source string (SPEC §5) into the plugin trees it
// offers, pinned to a commit when remote, and materialized on local disk.
package resolver

import "context"

// Request is what a caller asks to resolve.
type Request struct {
	Source        string
	Name          string // selects a marketplace entry
	Link          bool
	Offline       bool
	AllowUnpinned bool
}

// Fetched is a resolved source.
type Fetched struct {
	Source     string // canonical form of the request's source
	Kind       string // local, zip, github, marketplace
	Repo       string
	Ref        string
	Commit     string
	Subdir     string
	Candidates []Candidate
	Warnings   []string
	// Snapshots are the store digests the candidates are read from, so a
	// live plan keeps them from garbage collection.
	Snapshots []string
}

// Candidate is one plugin tree a source offers.
type Candidate struct {
	Name   string // marketplace entry name; "" for a single-plugin source
	Source string // what the registry records
	Commit string // 40-hex for remote trees
	Dir    string // where the tree is on disk now
	// Digest is the tree digest of Dir when already known (a read-only
	// store snapshot whose digest is cached); "" means compute it.
	Digest      string
	Link        bool
	Marketplace string   // the marketplace source this candidate was listed by
	Warnings    []string // about how the candidate was resolved
	// Err marks an entry that cannot be planned. Skip says a bulk plan
	// leaves it out with a warning rather than reporting it as an error.
	Err  error
	Skip bool
}

// Resolver resolves sources.
type Resolver interface {
	Resolve(ctx context.Context, req Request) (*Fetched, error)
}
