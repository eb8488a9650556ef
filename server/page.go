package server

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"reasonix.io/plugind/resolver/host"
)

// The installer page (SPEC §12): one HTML document, one stylesheet and one
// script, embedded in the binary. No build step, no CDN, nothing fetched
// from elsewhere, so it works offline. Everything a plugin supplies is put
// into the page as text by the script (textContent), and the Content
// Security Policy allows only these files to run or style anything, so an
// injected tag stays inert even if a bug let one through.

//go:embed web
var webFS embed.FS

// pageCSP is the policy of the page and its assets.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// apiCSP goes on every other answer: nothing in it may run, and no page
// may frame the daemon (clickjacking the Install button).
const apiCSP = "default-src 'none'; frame-ancestors 'none'; sandbox"

// asset is one embedded file, ready to serve.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

type pageAssets struct {
	files map[string]asset
	login *template.Template
}

func loadPageAssets() (*pageAssets, error) {
	pa := &pageAssets{files: map[string]asset{}}
	err := fs.WalkDir(webFS, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := webFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ctype := cmp.Or(mime.TypeByExtension(path.Ext(p)), "application/octet-stream")
		pa.files[strings.TrimPrefix(p, "web/")] = asset{body: body, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := pa.files["index.html"]; !ok {
		return nil, errors.New("server: the page is not embedded")
	}
	pa.login, err = template.ParseFS(webFS, "web/login.tmpl")
	if err != nil {
		return nil, err
	}
	return pa, nil
}

// pageHeaders are set on the page, its assets and the login answers.
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := s.page.files[name]
	if !ok || strings.HasSuffix(name, ".tmpl") {
		writeError(w, http.StatusNotFound, CodeNoRoute, "no asset %q", name)
		return
	}
	h := w.Header()
	pageHeaders(h)
	h.Set("Content-Type", a.ctype)
	h.Set("ETag", a.etag)
	// Revalidate every time: a new binary must not run an old script.
	h.Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}

// GET /: the installer page. It holds no data and no secret, so it is
// served to anyone who reaches the daemon; the script asks GET /session
// and shows how to sign in when there is no session.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.serveAsset(w, r, "index.html")
}

// GET /assets/{file}: the stylesheet and the script.
func (s *Server) assets(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name == "index.html" {
		writeError(w, http.StatusNotFound, CodeNoRoute, "no asset %q", name)
		return
	}
	s.serveAsset(w, r, name)
}

// POST /auth/code (bearer token only): a single-use login code for
// /login, valid for CodeTTL.
func (s *Server) authCode(w http.ResponseWriter, r *http.Request) {
	code, exp, err := s.sessions.newCode()
	if errors.Is(err, errTooMany) {
		writeError(w, http.StatusTooManyRequests, CodeBusy, "%v", err)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"ok": true, "code": code, "expiresAt": exp.UTC().Format(time.RFC3339),
		"expiresInSeconds": int(CodeTTL / time.Second), "loginPath": "/login?code=" + code,
	})
}

// GET /login?code=…: trades a login code for a session and sends the
// browser to the page, with the page token in the fragment (#signin=…),
// which the browser keeps to itself. A missing, spent, expired or unknown
// code gets a page that says which, and how to get a new link.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		// A HEAD (a link checker, a preview) must not spend the code.
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "sign in with GET /login?code=…")
		return
	}
	h := w.Header()
	pageHeaders(h)
	h.Set("Cache-Control", "no-store")
	if !host.IsLoopbackHost(r.Host) {
		// Only at a loopback address does the browser mark the page's own
		// requests (sessionAuth needs that), and only there do the cookie
		// and the page token not cross a network in clear. The code is
		// left unspent.
		s.loginRefused(w, http.StatusForbidden, fmt.Errorf("the page signs in only at a loopback address (http://127.0.0.1:PORT or http://localhost:PORT), not at %s", r.Host))
		return
	}
	previous := ""
	if c, err := r.Cookie(cookieName(r)); err == nil {
		previous = c.Value
	}
	cookie, pageToken, err := s.sessions.redeem(r.URL.Query().Get("code"), previous)
	if err != nil {
		status := http.StatusForbidden // used, expired or unknown: redeem's other refusals
		if errors.Is(err, errCodeMissing) {
			status = http.StatusBadRequest
		}
		s.loginRefused(w, status, err)
		return
	}
	http.SetCookie(w, sessionCookie(r, cookie, int(SessionMax/time.Second)))
	s.log.Info("signed in", "replaced_session", previous != "")
	h.Set("Location", "/#"+SignInFragment+pageToken)
	w.WriteHeader(http.StatusSeeOther)
}

// loginRefused answers /login with the page that says why.
func (s *Server) loginRefused(w http.ResponseWriter, status int, err error) {
	reason := err.Error()
	s.log.Info("sign-in refused", "reason", reason)
	var buf bytes.Buffer
	if terr := s.page.login.Execute(&buf, map[string]string{"Reason": strings.ToUpper(reason[:1]) + reason[1:]}); terr != nil {
		writeError(w, http.StatusInternalServerError, CodeInternal, "render: %v", terr)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// GET /session (session cookie and page token): when the session ends. It
// never repeats the page token: whoever asks must already hold it.
func (s *Server) sessionInfo(w http.ResponseWriter, r *http.Request) {
	a := authOf(r)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"ok":                 true,
		"expiresAt":          a.sess.created.Add(SessionMax).UTC().Format(time.RFC3339),
		"idleTimeoutSeconds": int(SessionIdle / time.Second),
	})
}

// POST /logout (session cookie and page token): ends the session.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName(r)); err == nil {
		s.sessions.end(c.Value)
	}
	http.SetCookie(w, sessionCookie(r, "", -1))
	w.WriteHeader(http.StatusNoContent)
}

// access is who may use a route.
type access int

const (
	accessAny     access = iota // the bearer token, or a session (cookie, page token, same origin)
	accessPublic                // anyone who passes the Host and Origin checks
	accessToken                 // the bearer token only
	accessSession               // a browser session only
)

// auth is what authorized a request.
type auth struct {
	who  principal
	sess session
}

type authKey struct{}

func authOf(r *http.Request) auth {
	a, _ := r.Context().Value(authKey{}).(auth)
	return a
}

func principalOf(r *http.Request) principal { return authOf(r).who }

// authenticate checks r against what its route requires. A request that
// carries an Authorization header is judged by it alone: a wrong token is
// refused even when a session cookie rides along.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, need access) (*http.Request, bool) {
	var a auth
	var ref *refusal
	switch {
	case need == accessPublic:
		return r, true
	case need == accessToken || (need == accessAny && r.Header.Get("Authorization") != ""):
		if !s.authorized(r) {
			ref = badToken
		}
		a.who = tokenPrincipal
	default:
		a.sess, ref = s.sessionAuth(r)
		a.who = sessionPrincipal(a.sess)
	}
	if ref != nil {
		ref.write(w)
		return nil, false
	}
	return r.WithContext(context.WithValue(r.Context(), authKey{}, a)), true
}
