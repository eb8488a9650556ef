package fakegithub

import (
	"net/http"
	"sync"
)

// WithBasicAuth makes every request need HTTP basic auth with user and
// password, as a private repository on a generic git host does: without
// them (or with others) the answer is 401 with a WWW-Authenticate
// challenge. AuthSeen lists what each request carried.
func WithBasicAuth(user, password string) Option {
	return func(o *options) { o.basicUser, o.basicPassword = user, password }
}

// authLog is what requests carried, in order: "" for nothing,
// "user:password" otherwise.
type authLog struct {
	mu   sync.Mutex
	seen []string
}

// AuthSeen lists the credentials requests carried ("" for none), in
// order, since the server started.
func (s *Server) AuthSeen() []string {
	s.auth.mu.Lock()
	defer s.auth.mu.Unlock()
	return append([]string(nil), s.auth.seen...)
}

// basicAuthorized records r's credential and reports whether it is the one
// WithBasicAuth wants (always, without that option); it answers 401
// itself when not.
func (s *Server) basicAuthorized(w http.ResponseWriter, r *http.Request) bool {
	if s.basic[0] == "" {
		return true
	}
	u, p, ok := r.BasicAuth()
	got := ""
	if ok {
		got = u + ":" + p
	}
	s.auth.mu.Lock()
	s.auth.seen = append(s.auth.seen, got)
	s.auth.mu.Unlock()
	if u == s.basic[0] && p == s.basic[1] {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="fakegithub"`)
	http.Error(w, "authentication required", http.StatusUnauthorized)
	return false
}
