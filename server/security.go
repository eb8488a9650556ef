package server

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"reasonix.io/plugind/resolver/host"
)

// DefaultAddr is where the daemon listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7878"

// MaxBodyBytes caps every request body (SPEC §12).
const MaxBodyBytes = 1 << 20

// CheckAddr reports whether addr (host:port) is a loopback address, and
// refuses anything else unless allowRemote: a daemon that installs code
// must not be reachable from the network by accident. An empty host means
// every interface, which is not loopback.
func CheckAddr(addr string, allowRemote bool) (remote bool, err error) {
	name, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("address %q: %w (want HOST:PORT, such as %s)", addr, err, DefaultAddr)
	}
	if host.IsLoopbackHost(name) {
		return false, nil
	}
	if !allowRemote {
		return true, fmt.Errorf("refusing to listen on %s (%s is not a loopback address): anyone who can reach the daemon and holds its token can install code; pass --allow-remote if you mean it", addr, cmp.Or(name, "every interface"))
	}
	return true, nil
}

// ipLiteral reports whether a Host header value is an IP address. Those
// cannot be rebound by DNS, so a daemon listening beyond loopback
// (--allow-remote) accepts them.
func ipLiteral(hostport string) bool {
	return net.ParseIP(host.HostWithoutPort(hostport)) != nil
}

// checkHost refuses requests whose Host is not a loopback name (DNS
// rebinding): 421, the server does not serve that name.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !host.IsLoopbackHost(r.Host) && !(s.allowRemote && ipLiteral(r.Host)) {
			writeError(w, http.StatusMisdirectedRequest, CodeForbidden, "host %q is not served here: use http://127.0.0.1, http://localhost or http://[::1]", r.Host)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses browser requests from other origins. Browsers send
// Origin on every cross-origin request (and on same-origin POSTs); a page is
// allowed only when it is itself served from a loopback name. Non-browser
// clients send no Origin at all. No CORS headers are ever sent, so a
// browser never lets another origin read an answer either. Requests that
// a session cookie authorizes must come from the daemon's own origin
// exactly (sessionAuth): a page on another loopback port is same-site, and
// would otherwise ride on the cookie.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origins, present := r.Header["Origin"]; present {
			if len(origins) != 1 || !loopbackOrigin(origins[0]) {
				writeError(w, http.StatusForbidden, CodeForbidden, "cross-origin requests are refused (Origin %q)", strings.Join(origins, ", "))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackOrigin(origin string) bool {
	u := parseOrigin(origin)
	return u != nil && host.IsLoopbackHost(u.Host)
}

// parseOrigin reads an Origin header's scheme://host[:port]; nil when it is
// not one (including "null", sent by sandboxed and file: pages).
func parseOrigin(origin string) *url.URL {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return nil
	}
	return u
}

// authorized checks the bearer token in constant time. Both sides are
// hashed first so the comparison does not even depend on the length of
// what the client sent.
func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], s.tokenSum[:]) == 1
}

// badToken is the refusal of a missing or wrong bearer token.
var badToken = &refusal{http.StatusUnauthorized, CodeUnauthorized, "missing or wrong bearer token: send Authorization: Bearer <the contents of serve.token in the Reasonix home>"}

// limitBody caps request bodies: a declared length over the cap is refused
// at once, and a body that runs over it fails its read with
// *http.MaxBytesError, which handlers answer with 413.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.maxBody {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, "request body is %d bytes; the limit is %d", r.ContentLength, s.maxBody)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		next.ServeHTTP(w, r)
	})
}
