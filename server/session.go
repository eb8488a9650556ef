package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Browser sign-in (SPEC §12). The page never sees the bearer token:
//
//  1. `reasonix studio` (holding the token) asks POST /auth/code for a login
//     code: single use, valid for CodeTTL.
//  2. It opens /login?code=… in the browser, which trades the code for a
//     session cookie (HttpOnly, SameSite=Strict, Path=/) and is redirected
//     to the page, so the code leaves the address bar at once.
//  3. The page reads its per-session CSRF token from GET /session and sends
//     it in CSRFHeader on every mutation.
//
// Sessions and codes live in memory only: a restarted daemon forgets them
// and the user signs in again with `reasonix studio`. Only hashes of codes
// and session ids are kept, so a memory dump or a log line cannot replay
// them.
//
// A cookie is not scoped to a port: the browser also sends it to any other
// server on the same loopback host. That is why a session alone authorizes
// nothing cross-origin: requests that a browser marks as coming from another
// origin (Sec-Fetch-Site, Origin) are refused, and a mutation also needs the
// CSRF token, which only a same-origin script can read.
const (
	// CodeTTL is how long a login code may wait to be used.
	CodeTTL = 60 * time.Second
	// SessionIdle ends a session nobody used for this long.
	SessionIdle = 2 * time.Hour
	// SessionMax ends a session this long after sign-in, used or not.
	SessionMax = 12 * time.Hour
	// CSRFHeader carries the session's CSRF token on mutations.
	CSRFHeader = "X-Reasonix-CSRF"

	// A spent or expired code is remembered this long, so using it again
	// says "already used" or "expired" rather than "unknown".
	codeMemory = 10 * time.Minute
	// Bounds on what unauthenticated or token holders can make the daemon
	// keep in memory.
	maxPendingCodes = 64
	maxKnownCodes   = 1024
	maxSessions     = 64
)

// Login refusals, said on the page /login answers.
var (
	errCodeMissing = errors.New("the sign-in link has no code")
	errCodeUsed    = errors.New("this sign-in link was already used: a link works once")
	errCodeExpired = errors.New("this sign-in link expired: a link works for one minute")
	errCodeUnknown = errors.New("this sign-in link is not valid here (the daemon may have restarted since it was made)")
	errTooMany     = errors.New("too many sign-in links are waiting to be used; try again in a minute")
)

type codeState struct {
	expires time.Time
	used    bool
}

type session struct {
	key      [32]byte // sha256 of the cookie value
	csrf     string
	created  time.Time
	lastSeen time.Time
}

// sessionStore holds login codes and browser sessions, by hash.
type sessionStore struct {
	now func() time.Time

	mu       sync.Mutex
	codes    map[[32]byte]*codeState
	sessions map[[32]byte]*session
}

func newSessionStore(now func() time.Time) *sessionStore {
	if now == nil {
		now = time.Now
	}
	return &sessionStore{now: now, codes: map[[32]byte]*codeState{}, sessions: map[[32]byte]*session{}}
}

// randomString returns n random bytes, base64url without padding.
func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// newCode issues a single-use login code valid for CodeTTL.
func (st *sessionStore) newCode() (string, time.Time, error) {
	code, err := randomString(32)
	if err != nil {
		return "", time.Time{}, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	st.sweep(now)
	pending := 0
	for _, c := range st.codes {
		if !c.used && now.Before(c.expires) {
			pending++
		}
	}
	if pending >= maxPendingCodes {
		return "", time.Time{}, errTooMany
	}
	if len(st.codes) >= maxKnownCodes {
		st.forgetOldestCode()
	}
	exp := now.Add(CodeTTL)
	st.codes[sha256.Sum256([]byte(code))] = &codeState{expires: exp}
	return code, exp, nil
}

// redeem spends code and opens a session; it returns the cookie value.
func (st *sessionStore) redeem(code string) (string, error) {
	if code == "" {
		return "", errCodeMissing
	}
	value, err := randomString(32)
	if err != nil {
		return "", err
	}
	csrf, err := randomString(32)
	if err != nil {
		return "", err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	st.sweep(now)
	c, ok := st.codes[sha256.Sum256([]byte(code))]
	switch {
	case !ok:
		return "", errCodeUnknown
	case c.used:
		return "", errCodeUsed
	case !now.Before(c.expires):
		return "", errCodeExpired
	}
	c.used = true
	if len(st.sessions) >= maxSessions {
		st.endOldestSession()
	}
	key := sha256.Sum256([]byte(value))
	st.sessions[key] = &session{key: key, csrf: csrf, created: now, lastSeen: now}
	return value, nil
}

// lookup returns a copy of the live session whose cookie value is value,
// marking it used.
func (st *sessionStore) lookup(value string) (session, bool) {
	if value == "" {
		return session{}, false
	}
	key := sha256.Sum256([]byte(value))
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.sessions[key]
	if !ok {
		return session{}, false
	}
	now := st.now()
	if !st.alive(s, now) {
		delete(st.sessions, key)
		return session{}, false
	}
	s.lastSeen = now
	return *s, true
}

// end forgets the session whose cookie value is value (sign out).
func (st *sessionStore) end(value string) {
	key := sha256.Sum256([]byte(value))
	st.mu.Lock()
	delete(st.sessions, key)
	st.mu.Unlock()
}

func (st *sessionStore) alive(s *session, now time.Time) bool {
	return now.Sub(s.lastSeen) < SessionIdle && now.Sub(s.created) < SessionMax
}

// sweep drops expired sessions and codes past their memory; st.mu held.
func (st *sessionStore) sweep(now time.Time) {
	for k, s := range st.sessions {
		if !st.alive(s, now) {
			delete(st.sessions, k)
		}
	}
	for k, c := range st.codes {
		if now.Sub(c.expires) > codeMemory {
			delete(st.codes, k)
		}
	}
}

func (st *sessionStore) forgetOldestCode() {
	var oldest [32]byte
	var at time.Time
	for k, c := range st.codes {
		if at.IsZero() || c.expires.Before(at) {
			oldest, at = k, c.expires
		}
	}
	delete(st.codes, oldest)
}

func (st *sessionStore) endOldestSession() {
	var oldest [32]byte
	var at time.Time
	for k, s := range st.sessions {
		if at.IsZero() || s.lastSeen.Before(at) {
			oldest, at = k, s.lastSeen
		}
	}
	delete(st.sessions, oldest)
}

// cookieName is the session cookie's name for the daemon r reached. Cookies
// ignore ports, so daemons of two homes on one host would overwrite each
// other's session under a shared name; the port keeps them apart.
func cookieName(r *http.Request) string {
	name := "reasonix_session"
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		name += "_" + port
	}
	return name
}

func sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: cookieName(r), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	}
}

// principal names who a request acts for, for what is kept per client
// (progress streams): the token holder, or one browser session.
type principal string

const tokenPrincipal principal = "token"

func sessionPrincipal(s session) principal {
	return principal("session:" + hex.EncodeToString(s.key[:8]))
}

// sessionAuth authorizes r by its session cookie. A request the browser
// marks as coming from another origin is refused even with a valid cookie
// (another server on the same loopback host receives this cookie too), and
// a request that can change anything also needs the CSRF token.
func (s *Server) sessionAuth(r *http.Request) (session, int, string, string) {
	c, err := r.Cookie(cookieName(r))
	if err != nil {
		return session{}, http.StatusUnauthorized, CodeUnauthorized,
			"not signed in: send Authorization: Bearer <the contents of serve.token in the Reasonix home>, or sign in to the page with `reasonix studio`"
	}
	sess, ok := s.sessions.lookup(c.Value)
	if !ok {
		return session{}, http.StatusUnauthorized, CodeUnauthorized,
			"the session expired or the daemon restarted: run `reasonix studio` to sign in again"
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return session{}, http.StatusForbidden, CodeForbidden, "a request from another site or origin (Sec-Fetch-Site: " + site + ") is refused"
	}
	if origins, ok := r.Header["Origin"]; ok && (len(origins) != 1 || !sameOrigin(origins[0], r.Host)) {
		return session{}, http.StatusForbidden, CodeForbidden, "a request from another origin is refused (Origin " + strings.Join(origins, ", ") + ")"
	}
	if !safeMethod(r.Method) {
		got := sha256.Sum256([]byte(r.Header.Get(CSRFHeader)))
		want := sha256.Sum256([]byte(sess.csrf))
		if r.Header.Get(CSRFHeader) == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return session{}, http.StatusForbidden, CodeForbidden, "missing or wrong " + CSRFHeader + " header: the page sends it, other sites cannot"
		}
	}
	return sess, 0, "", ""
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead
}

// sameOrigin reports whether origin is http://host exactly (the daemon's
// own origin, as the browser addressed it).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}
