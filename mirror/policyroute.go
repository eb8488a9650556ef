package mirror

import (
	"net/http"

	"reasonix.io/plugind/mirror/meta"
	wire "reasonix.io/plugind/resolver/host/mirror"
)

// GET /v1/policy (behind the token, like every /v1 route) tells a client
// what of the operator's policy it applies itself: the rule for code
// plugins fetch at run time (SPEC §17). The mirror serves content, not
// plans, so it cannot see a plugin's commands; the client's installer
// reads the rule once per plan that needs it and blocks what it refuses.
// The allow and block rules stay here: the mirror applies them to every
// repository it is asked for.

func (s *Server) handlePolicy(w http.ResponseWriter, r *http.Request) {
	e := &meta.Entry{Action: "policy", Outcome: outcomeHit}
	rule := s.cfg.Policy.Runtime()
	e.Detail = string(rule)
	s.answer(w, r, e, func() { writeJSON(w, http.StatusOK, wire.PolicyResponse{Runtime: string(rule)}) })
}
