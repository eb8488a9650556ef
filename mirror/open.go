package mirror

import (
	"context"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
)

// Open opens a replica of cfg (`reasonix mirror serve`): its database at
// dsn (the schema migrated), its bucket (created when missing), and
// upstream as a client reaches it by getenv (app.Upstream). close releases
// the database once the replica has stopped.
func Open(ctx context.Context, dsn string, bucket objects.Config, getenv func(string) string, allowPrivateUpstreams bool, cfg Config) (srv *Server, close func(), err error) {
	if cfg.DB, err = meta.Open(ctx, dsn); err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			cfg.DB.Close()
		}
	}()
	if cfg.Objects, err = objects.Open(ctx, bucket); err != nil {
		return nil, nil, err
	}
	if cfg.Upstream, err = app.Upstream(getenv, cfg.Log, allowPrivateUpstreams); err != nil {
		return nil, nil, err
	}
	if srv, err = New(cfg); err != nil {
		return nil, nil, err
	}
	return srv, cfg.DB.Close, nil
}
