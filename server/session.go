package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Browser sign-in (SPEC §12). The page never sees the bearer token:
//
//  1. `reasonix studio` (holding the token, once the daemon proved it holds
//     it too) asks POST /auth/code for a login code: single use, valid for
//     CodeTTL.
//  2. It opens /login?code=… in the browser, which trades the code for a
//     session: a cookie (HttpOnly, SameSite=Strict, Path=/) and a page
//     token. The browser is redirected to /#signin=<page token>: the code
//     leaves the address bar at once, and the page token travels in the
//     fragment, which browsers never send to any server.
//  3. The page moves the page token into localStorage, which belongs to
//     the daemon's origin (scheme, host and port), removes it from the
//     address bar, and sends it in PageTokenHeader on every request.
//
// Cookies ignore ports: the browser also sends the session cookie to any
// other server on the same loopback host, which can replay it from a
// program that sets whatever headers it likes. So the cookie alone
// authorizes nothing. A request that relies on it needs, besides the
// cookie, the browser's own sign that the daemon's page made it
// (Sec-Fetch-Site: same-origin, or an Origin equal to the daemon's), and
// the page token, which no other origin can read and no answer ever
// repeats (GET /session does not). Reads need them as much as mutations.
//
// Several tabs share one sign-in through localStorage; a newer sign-in in
// the same browser ends the session it replaces (its cookie came with the
// sign-in), and a tab still holding that session's page token is told it
// was signed out by a newer sign-in.
//
// Sessions and codes live in memory only: a restarted daemon forgets them
// and the user signs in again with `reasonix studio`. Only hashes of codes,
// cookies and page tokens are kept, so a memory dump or a log line cannot
// replay them.
const (
	// CodeTTL is how long a login code may wait to be used.
	CodeTTL = 60 * time.Second
	// SessionIdle ends a session nobody used for this long.
	SessionIdle = 2 * time.Hour
	// SessionMax ends a session this long after sign-in, used or not.
	SessionMax = 12 * time.Hour
	// PageTokenHeader carries the session's page token on every request
	// that a session cookie authorizes.
	PageTokenHeader = "X-Reasonix-Page-Token"
	// SignInFragment starts the fragment /login redirects to; the page
	// token follows it.
	SignInFragment = "signin="

	// A spent or expired code is remembered this long, so using it again
	// says "already used" or "expired" rather than "unknown"; a replaced
	// session's page token as long, to say why that tab was signed out.
	codeMemory = 10 * time.Minute
	// Bounds on what unauthenticated or token holders can make the daemon
	// keep in memory.
	maxPendingCodes = 64
	maxKnownCodes   = 1024
	maxSessions     = 64
	maxReplaced     = 256
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
	page     [32]byte // sha256 of the page token
	created  time.Time
	lastSeen time.Time
}

// sessionStore holds login codes and browser sessions, by hash.
type sessionStore struct {
	now func() time.Time

	mu       sync.Mutex
	codes    map[[32]byte]*codeState
	sessions map[[32]byte]*session
	// replaced holds the page-token hashes of sessions that a newer
	// sign-in in the same browser ended, until when they are remembered.
	replaced map[[32]byte]time.Time
}

func newSessionStore(now func() time.Time) *sessionStore {
	if now == nil {
		now = time.Now
	}
	return &sessionStore{
		now: now, codes: map[[32]byte]*codeState{}, sessions: map[[32]byte]*session{},
		replaced: map[[32]byte]time.Time{},
	}
}

// randomString returns n random bytes spelled by encode
// (crypto/rand.Read never fails).
func randomString(n int, encode func([]byte) string) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return encode(b)
}

// newCode issues a single-use login code valid for CodeTTL.
func (st *sessionStore) newCode() (string, time.Time, error) {
	code := randomString(32, base64.RawURLEncoding.EncodeToString)
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
		deleteOldest(st.codes, func(c *codeState) time.Time { return c.expires })
	}
	exp := now.Add(CodeTTL)
	st.codes[sha256.Sum256([]byte(code))] = &codeState{expires: exp}
	return code, exp, nil
}

// redeem spends code and opens a session; it returns the cookie value and
// the page token. previous is the session cookie the browser sent with the
// sign-in, if any: the new session replaces it in that browser, so it ends.
func (st *sessionStore) redeem(code, previous string) (cookie, pageToken string, err error) {
	if code == "" {
		return "", "", errCodeMissing
	}
	cookie, pageToken = randomString(32, base64.RawURLEncoding.EncodeToString), randomString(32, base64.RawURLEncoding.EncodeToString)
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	st.sweep(now)
	c, ok := st.codes[sha256.Sum256([]byte(code))]
	switch {
	case !ok:
		return "", "", errCodeUnknown
	case c.used:
		return "", "", errCodeUsed
	case !now.Before(c.expires):
		return "", "", errCodeExpired
	}
	c.used = true
	if previous != "" {
		if old, ok := st.sessions[sha256.Sum256([]byte(previous))]; ok {
			st.replace(old, now)
		}
	}
	if len(st.sessions) >= maxSessions {
		deleteOldest(st.sessions, func(s *session) time.Time { return s.lastSeen })
	}
	key := sha256.Sum256([]byte(cookie))
	st.sessions[key] = &session{key: key, page: sha256.Sum256([]byte(pageToken)), created: now, lastSeen: now}
	return cookie, pageToken, nil
}

// replace ends old, remembering its page token as replaced; st.mu held.
func (st *sessionStore) replace(old *session, now time.Time) {
	delete(st.sessions, old.key)
	if len(st.replaced) >= maxReplaced {
		deleteOldest(st.replaced, func(until time.Time) time.Time { return until })
	}
	st.replaced[old.page] = now.Add(codeMemory)
}

// check returns the live session whose cookie is cookie, if pageToken is
// its page token, marking it used; else why not. A request that fails the
// check does not keep a session alive.
func (st *sessionStore) check(cookie, pageToken string) (session, *refusal) {
	key := sha256.Sum256([]byte(cookie))
	page := sha256.Sum256([]byte(pageToken))
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	replaced := false
	if until, ok := st.replaced[page]; ok && pageToken != "" {
		replaced = now.Before(until)
	}
	s, ok := st.sessions[key]
	if ok && !st.alive(s, now) {
		delete(st.sessions, key)
		ok = false
	}
	switch {
	case replaced: // the page token is of a session a newer sign-in ended
		return session{}, &refusal{http.StatusUnauthorized, CodeSessionReplaced, replacedMsg}
	case !ok:
		return session{}, &refusal{http.StatusUnauthorized, CodeSignedOut, signedOutMsg + " (the session expired, or the daemon restarted)"}
	case pageToken == "" || subtle.ConstantTimeCompare(page[:], s.page[:]) != 1:
		// A cookie without its page token is what another server on this
		// host gets from the browser: it opens nothing.
		return session{}, &refusal{http.StatusUnauthorized, CodeSignedOut, signedOutMsg + " (this request does not carry the page's own token)"}
	}
	s.lastSeen = now
	return *s, nil
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
	maps.DeleteFunc(st.sessions, func(_ [32]byte, s *session) bool { return !st.alive(s, now) })
	maps.DeleteFunc(st.codes, func(_ [32]byte, c *codeState) bool { return now.Sub(c.expires) > codeMemory })
	maps.DeleteFunc(st.replaced, func(_ [32]byte, until time.Time) bool { return !now.Before(until) })
}

// deleteOldest deletes the entry of m whose time (by at) is earliest:
// what goes first when a bounded table is full.
func deleteOldest[V any](m map[[32]byte]V, at func(V) time.Time) {
	var oldest [32]byte
	var first time.Time
	for k, v := range m {
		if t := at(v); first.IsZero() || t.Before(first) {
			oldest, first = k, t
		}
	}
	delete(m, oldest)
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

// What a signed-out page is told. The page shows the sentence as it is.
const (
	signedOutMsg = "signed out — run `reasonix studio` to sign in"
	replacedMsg  = "signed out by a newer sign-in — reload"
)

// refusal is why a request was refused (by sessionAuth, or for a progress
// stream over a limit).
type refusal struct {
	status int
	code   string
	msg    string
}

// write answers the refusal; one for want of credentials says which kind
// the daemon takes.
func (f *refusal) write(w http.ResponseWriter) {
	if f.code == CodeUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="reasonix"`)
	}
	writeError(w, f.status, f.code, "%s", f.msg)
}

// sessionAuth authorizes r by its session cookie (see the top of this
// file): the browser's same-origin signal first, then the cookie and the
// page token together.
func (s *Server) sessionAuth(r *http.Request) (session, *refusal) {
	c, err := r.Cookie(cookieName(r))
	if err != nil {
		return session{}, &refusal{http.StatusUnauthorized, CodeUnauthorized,
			"not signed in: send Authorization: Bearer <the contents of serve.token in the Reasonix home>, or sign in to the page with `reasonix studio`"}
	}
	if ref := sameOriginSignal(r); ref != nil {
		return session{}, ref
	}
	return s.sessions.check(c.Value, r.Header.Get(PageTokenHeader))
}

// sameOriginSignal refuses r unless the browser marked it as made by the
// daemon's own page: Sec-Fetch-Site: same-origin, or, from a browser that
// sends no fetch metadata, an Origin equal to the daemon's.
func sameOriginSignal(r *http.Request) *refusal {
	origins, hasOrigin := r.Header["Origin"]
	if hasOrigin && (len(origins) != 1 || !sameOrigin(origins[0], r.Host)) {
		return &refusal{http.StatusForbidden, CodeForbidden, "a request from another origin is refused (Origin " + strings.Join(origins, ", ") + ")"}
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); {
	case site == "same-origin":
		return nil
	case site != "":
		return &refusal{http.StatusForbidden, CodeForbidden, "a request from another site or origin (Sec-Fetch-Site: " + site + ") is refused"}
	case hasOrigin:
		return nil
	}
	return &refusal{http.StatusForbidden, CodeForbidden,
		"this request carries no sign that the daemon's own page made it (a browser sends Sec-Fetch-Site: same-origin); programs send Authorization: Bearer <the contents of serve.token> instead"}
}

// sameOrigin reports whether origin is http://host exactly (the daemon's
// own origin, as the browser addressed it).
func sameOrigin(origin, host string) bool {
	u := parseOrigin(origin)
	return u != nil && u.Scheme == "http" && strings.EqualFold(u.Host, host)
}
