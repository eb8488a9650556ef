package server

import (
	"net/http"

	"reasonix.io/plugind/installer"
)

// GET /project: how this home stands against the lock of the project the
// daemon serves ({"project": null} when it serves none), read from the
// registry and the lock alone.
func (s *Server) projectState(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Project *installer.ProjectState `json:"project"`
	}
	if s.project != nil {
		st := s.in.ProjectState(s.project)
		body.Project = &st
	}
	writeJSON(w, http.StatusOK, body)
}
