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
	var body struct {
		Source  string `json:"source"`
		Offline bool   `json:"offline"`
	}
	if !s.decode(w, r, &body) {
		return
	}
	ctx, cancel := s.detached()
	defer cancel()
	v, err := installer.Validate(ctx, body.Source, installer.ValidateOptions{
		Offline:      body.Offline,
		NoWorkingDir: true,
		Open: func(context.Context) (*installer.Installer, func(), error) {
			return s.in, func() {}, nil
		},
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
