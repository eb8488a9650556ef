package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/resolver"
)

const healthzPattern = "GET /healthz"

// routes is the route table of SPEC §12. Who may use each route is in
// routeAccess; a route not listed there takes the bearer token or a
// browser session (its cookie and page token, from the daemon's own page).
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc(healthzPattern, s.healthz)
	mux.HandleFunc("GET /plugins", s.listPlugins)
	mux.HandleFunc("POST /plugins/plan", s.plan)
	mux.HandleFunc("POST /plugins/install", s.install)
	mux.HandleFunc("POST /plugins/enabled", s.setEnabled)
	mux.HandleFunc("DELETE /plugins/{name}", s.remove)
	mux.HandleFunc("GET /plugins/{name}/export", s.export)
	mux.HandleFunc("POST /extensions/reload", s.reload)
	mux.HandleFunc("POST /plugins/update", s.update)
	mux.HandleFunc("POST /sync", s.sync)
	mux.HandleFunc("POST /plugins/prune", s.prune)
	mux.HandleFunc("POST /plugins/validate", s.validate)
	mux.HandleFunc("GET /plugins/available", s.available)
	mux.HandleFunc("GET /marketplaces", s.listMarketplaces)
	mux.HandleFunc("POST /marketplaces", s.addMarketplace)
	mux.HandleFunc("POST /marketplaces/{name}/update", s.updateMarketplace)
	mux.HandleFunc("DELETE /marketplaces/{name}", s.removeMarketplace)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /updates", s.updates)
	mux.HandleFunc("GET /project", s.projectState)

	// The page and its sign-in.
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /assets/{file}", s.assets)
	mux.HandleFunc("GET /login", s.login)
	mux.HandleFunc("POST /auth/code", s.authCode)
	mux.HandleFunc("POST /auth/proof", s.proof)
	mux.HandleFunc("GET /session", s.sessionInfo)
	mux.HandleFunc("POST /logout", s.logout)
	return mux
}

// routeAccess is who may use the routes that differ from the default
// (accessAny), by mux pattern.
var routeAccess = map[string]access{
	healthzPattern:       accessPublic,
	"GET /{$}":           accessPublic,
	"GET /assets/{file}": accessPublic,
	"GET /login":         accessPublic,
	"POST /auth/code":    accessToken,
	"POST /auth/proof":   accessPublic,
	"GET /session":       accessSession,
	"POST /logout":       accessSession,
}

// noRoute answers what the mux has no route for, as JSON: 405 (with Allow)
// when the path exists under another method, 400 for a path that is not in
// canonical form (the mux would redirect it), else 404. The mux's own 404,
// 405 or redirect answer is recorded to read its status and Allow.
func noRoute(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) {
	h, _ := mux.Handler(r)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	switch allow := rec.Header().Get("Allow"); {
	case rec.Code == http.StatusMethodNotAllowed:
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.EscapedPath(), allow)
	case rec.Code >= 300 && rec.Code < 400:
		writeError(w, http.StatusBadRequest, CodeBadRequest, "path %q is not in canonical form", r.URL.EscapedPath())
	default:
		writeError(w, http.StatusNotFound, CodeNoRoute, "no route %s %s", r.Method, r.URL.EscapedPath())
	}
}

// GET /healthz: no token needed; says only that the daemon answers.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// GET /plugins: installed packages with inventory, status and warnings, the
// same JSON as `reasonix plugin list --json`.
func (s *Server) listPlugins(w http.ResponseWriter, r *http.Request) {
	body, err := s.list.get(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// POST /plugins/plan {source, name?, names?, link?, replace?, offline?,
// allowUnpinned?, config?}: the plan (config: userConfig values, "KEY" or
// "NAME.KEY" → the value as text), as `plugin install SOURCE --dry-run` prints it,
// stored in the cache by planId. Identical requests in flight at the same
// time share one plan (and so one fetch), and each hears its progress when
// it names a stream in ProgressHeader.
func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	var body planBody
	progress, ok := s.decodeReporting(w, r, false, &body)
	if !ok {
		return
	}
	if body.PlanID != "" {
		finishProgress(progress, nil)
		writeError(w, http.StatusBadRequest, CodeBadRequest, "planId is what a plan returns; to install an approved plan, POST it to /plugins/install")
		return
	}
	req, refused, err := body.request()
	if err != nil {
		finishProgress(progress, refused)
		s.reply(w, r, refused, err)
		return
	}
	// How the source reads (a known marketplace's name, NAME@MARKET, a
	// path) is the installer's one rule; the daemon's installer refuses
	// relative paths (installer.Config.NoWorkingDir).
	key, _ := json.Marshal(req)
	fan := s.joinFlight(string(key), progress)
	ch := s.plans.DoChan(string(key), func() (any, error) {
		defer s.leaveFlight(string(key), fan)
		ctx, cancel := s.detached()
		defer cancel()
		ctx = resolver.WithProgress(ctx, reporter(fan.update))
		return s.in.Install(ctx, req, installer.Approval{DryRun: true})
	})
	select {
	case res := <-ch:
		resp := res.Val.(*installer.Response)
		finishProgress(progress, resp)
		s.reply(w, r, resp, res.Err)
	case <-r.Context().Done():
		// The client left (or the daemon is stopping); a shared plan goes
		// on for the others.
		finishProgress(progress, nil)
		writeError(w, http.StatusServiceUnavailable, CodeCancelled, "request cancelled")
	}
}

// finishProgress ends a progress stream with the response's status.
func finishProgress(p *progressStream, resp *installer.Response) {
	if p == nil {
		return
	}
	status := string(installer.StatusFailed)
	if resp != nil {
		status = string(resp.Status)
	}
	p.finish(status)
}

// POST /plugins/install {…same, planId}: applies exactly the approved plan,
// or refuses. planId alone is enough: the request is then the one stored
// with the plan, which survives a restart — with its sensitive userConfig
// values sent again in config, since no stored plan keeps them. Either way the source is planned
// again and applied only if its planId is still the approved one, and apply
// re-checks every staged tree against its approved digest.
func (s *Server) install(w http.ResponseWriter, r *http.Request) {
	var body installBody
	progress, ok := s.decodeReporting(w, r, true, &body)
	if !ok {
		return
	}
	if body.PlanID.IsZero() {
		finishProgress(progress, nil)
		writeError(w, http.StatusBadRequest, CodeBadRequest, "planId is required: POST /plugins/plan, review the plan, and send its planId")
		return
	}
	s.run(w, r, progress, func(ctx context.Context) (any, error) {
		req, refused, err := body.request()
		if err != nil {
			return refused, err
		}
		return s.in.InstallApproved(ctx, req, body.PlanID)
	})
}

// POST /plugins/enabled {name, enabled, force?}: disabling a plugin that
// enabled plugins need is refused (install.conflict, naming them) unless
// force, as `plugin disable NAME [--force]` is; the warnings say who stays
// enabled without it.
func (s *Server) setEnabled(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name    string `json:"name"`
		Enabled *bool  `json:"enabled"`
		Force   bool   `json:"force"`
	}
	if !s.decode(w, r, &body) {
		return
	}
	if body.Enabled == nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, `"enabled" (true or false) is required`)
		return
	}
	// SetEnabled refuses a name that is not one first, as the CLI's.
	s.run(w, r, nil, func(ctx context.Context) (any, error) {
		e, warnings, err := s.in.SetEnabled(ctx, body.Name, *body.Enabled, body.Force)
		return map[string]any{"ok": true, "plugin": e, "warnings": warnings}, err
	})
}

// DELETE /plugins/{name}[?force=true]: the same JSON as `plugin remove
// NAME --yes [--force]`; a plugin others need is refused unless force.
func (s *Server) remove(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := plugind.ValidateName(name); err != nil {
		s.reply(w, r, installer.ErrorResponse(name, err), err)
		return
	}
	force, ok := queryBool(w, r, "force")
	if !ok {
		return
	}
	s.run(w, r, nil, func(ctx context.Context) (any, error) {
		return s.in.Remove(ctx, name, force)
	})
}

// POST /plugins/prune[?dryRun=true]: the same JSON as `plugin prune
// --yes|--dry-run`.
func (s *Server) prune(w http.ResponseWriter, r *http.Request) {
	dryRun, ok := queryBool(w, r, "dryRun")
	if !ok {
		return
	}
	s.run(w, r, nil, func(ctx context.Context) (any, error) {
		return s.in.Prune(ctx, dryRun)
	})
}

// GET /plugins/{name}/export: the installed copy as a zip, credentials
// replaced by ${VAR} references. The zip is built in a temporary file first,
// so a failure is still a JSON error rather than a truncated download.
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	name, ok := s.pathName(w, r)
	if !ok {
		return
	}
	tmp, err := os.CreateTemp("", "reasonix-export-*.zip")
	if err != nil {
		s.fail(w, r, fmt.Errorf("export %s: %w", name, err))
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	info, err := s.in.Export(r.Context(), name, tmp)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		s.fail(w, r, fmt.Errorf("export %s: %w", name, err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filepath.Base(name) + ".zip"}))
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("X-Reasonix-Required-Env", strings.Join(info.RequiredEnv, ", "))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, tmp)
}

// POST /extensions/reload: re-reads the registry and re-checks every
// installed root; 204, or 409 with the reason (a corrupt or unreadable
// registry), keeping what was loaded before.
func (s *Server) reload(w http.ResponseWriter, r *http.Request) {
	if err := s.list.reload(r.Context()); err != nil {
		status, code := s.classify(r, err)
		if status != http.StatusServiceUnavailable {
			status = http.StatusConflict
		}
		writeJSON(w, status, ErrorBody{OK: false, Error: err.Error(), ErrorCode: code})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
