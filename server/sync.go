package server

import (
	"context"
	"net/http"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/lockfile"
)

// POST /sync {lock, prune?, frozen?, offline?}: the plan that makes this
// home match lock (SPEC §16), stored by its planId with the lock, and
// applied like an update's with POST /plugins/install {planId}.
func (s *Server) sync(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Lock    *lockfile.Lock `json:"lock"`
		Prune   bool           `json:"prune"`
		Frozen  bool           `json:"frozen"`
		Offline bool           `json:"offline"`
	}
	progress, ok := s.decodeReporting(w, r, false, &body)
	if !ok {
		return
	}
	if body.Lock == nil {
		finishProgress(progress, nil)
		writeError(w, http.StatusBadRequest, CodeBadRequest, `"lock" is required: the lock document to sync to (reasonix lock -o - writes one)`)
		return
	}
	sr := installer.SyncRequest{Lock: body.Lock, Prune: body.Prune, Frozen: body.Frozen}
	s.run(w, r, progress, func(ctx context.Context) (any, error) {
		return s.in.Sync(ctx, sr, installer.Request{Offline: body.Offline}, installer.Approval{DryRun: true})
	})
}
