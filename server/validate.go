package server

import (
	"context"
	"net/http"

	"reasonix.io/plugind/installer"
)

// POST /plugins/validate {source, offline?}: the verdicts of `reasonix
// plugin validate` on a source, a folder or a document (absolute paths:
// the daemon does not share the caller's working directory). The answer
// is the same JSON as `validate --json`; a target that cannot be read at
// all is an error response.
func (s *Server) validate(w http.ResponseWriter, r *http.Request) {
	var body sourceRequest
	if !s.decode(w, r, &body) {
		return
	}
	s.run(w, r, nil, func(ctx context.Context) (any, error) {
		return installer.Validate(ctx, body.Source, installer.ValidateOptions{
			Offline:      body.Offline,
			NoWorkingDir: true,
			Open: func(context.Context) (*installer.Installer, func(), error) {
				return s.in, func() {}, nil
			},
		})
	})
}
