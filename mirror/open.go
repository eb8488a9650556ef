package mirror

import (
	"context"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
)

// OpenOptions say where a replica keeps what it serves and how it reaches
// upstream (`reasonix mirror serve`).
type OpenOptions struct {
	// DSN is the PostgreSQL database (its schema migrated on open).
	DSN string
	// Objects is the S3-compatible bucket of snapshot archives (created
	// when missing).
	Objects objects.Config
	// Getenv is the environment upstream is reached by, as a client
	// reaches it (REASONIX_GITHUB_URL, REASONIX_URL_REWRITE, GITHUB_TOKEN…).
	Getenv func(string) string
	// AllowPrivateUpstreams lets upstream connections reach loopback,
	// private and link-local addresses.
	AllowPrivateUpstreams bool
	// Config is the rest of the replica's configuration; its DB, Objects
	// and Upstream are what Open opens.
	Config Config
}

// Open opens a replica: its database, its bucket and its upstream hosts
// (app.Upstream). close releases the database once the replica has
// stopped.
func Open(ctx context.Context, o OpenOptions) (srv *Server, close func(), err error) {
	db, err := meta.Open(ctx, o.DSN)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	objs, err := objects.Open(ctx, o.Objects)
	if err != nil {
		return nil, nil, err
	}
	hosts, err := app.Upstream(o.Getenv, o.Config.Log, o.AllowPrivateUpstreams)
	if err != nil {
		return nil, nil, err
	}
	cfg := o.Config
	cfg.DB, cfg.Objects, cfg.Upstream = db, objs, hosts
	if srv, err = New(cfg); err != nil {
		return nil, nil, err
	}
	return srv, db.Close, nil
}
