package server

import (
	"context"
	"net/http"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/source"
)

// Routes of SPEC §12 for updates and known marketplaces (SPEC §7).

// POST /plugins/update {names? | name? | all: true, marketplace?, offline?,
// allowUnpinned?, refresh?, config?}: the update plan, as `plugin update
// --dry-run` prints it, stored by planId; POST /plugins/install {planId,
// config?} applies it (config: the sensitive values again, which no stored
// plan keeps).
// Like a plan, it reports to the progress stream named in ProgressHeader.
func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name          string   `json:"name"`
		Names         []string `json:"names"`
		All           bool     `json:"all"`
		Marketplace   string   `json:"marketplace"`
		Offline       bool     `json:"offline"`
		AllowUnpinned bool     `json:"allowUnpinned"`
		Refresh       bool     `json:"refresh"`
		// Config changes userConfig values, as update --config does.
		Config map[string]string `json:"config"`
	}
	progress, ok := s.decodeReporting(w, r, false, &body)
	if !ok {
		return
	}
	ur := installer.UpdateRequest{Names: body.Names, All: body.All, Marketplace: body.Marketplace}
	if body.Name != "" {
		ur.Names = append(ur.Names, body.Name)
	}
	var bad string
	switch {
	case ur.All && len(ur.Names) > 0:
		bad = `give "name"/"names" or "all", not both`
	case !ur.All && len(ur.Names) == 0:
		bad = `"name", "names" or "all": true is required`
	case ur.Marketplace != "" && !ur.All:
		bad = `"marketplace" goes with "all": true`
	}
	if bad != "" {
		finishProgress(progress, nil)
		writeError(w, http.StatusBadRequest, CodeBadRequest, "%s", bad)
		return
	}
	s.run(w, r, progress, func(ctx context.Context) (any, error) {
		return s.in.Update(ctx, ur, installer.Request{Offline: body.Offline, AllowUnpinned: body.AllowUnpinned, Refresh: body.Refresh, Config: body.Config}, installer.Approval{DryRun: true})
	})
}

// GET /marketplaces: the known marketplaces.
func (s *Server) listMarketplaces(w http.ResponseWriter, r *http.Request) {
	ms, err := s.in.Marketplaces(r.Context())
	s.reply(w, r, map[string]any{"marketplaces": ms}, err)
}

// POST /marketplaces {source, offline?}: read a marketplace and make it
// known.
func (s *Server) addMarketplace(w http.ResponseWriter, r *http.Request) {
	var body sourceRequest
	if !s.decode(w, r, &body) {
		return
	}
	s.run(w, r, nil, func(ctx context.Context) (any, error) {
		src, err := source.FromText(body.Source)
		if err != nil {
			return nil, err
		}
		up, err := s.in.AddMarketplace(ctx, src, body.Offline)
		return map[string]any{"ok": true, "marketplace": up}, err
	})
}

// POST /marketplaces/{name}/update {offline?}: read it again at its branch
// head.
func (s *Server) updateMarketplace(w http.ResponseWriter, r *http.Request) {
	name, ok := s.pathName(w, r)
	if !ok {
		return
	}
	var body struct {
		Offline bool `json:"offline"`
	}
	if r.ContentLength != 0 && !s.decode(w, r, &body) {
		return
	}
	s.run(w, r, nil, func(ctx context.Context) (any, error) {
		ups, err := s.in.UpdateMarketplaces(ctx, name, body.Offline)
		return map[string]any{"ok": true, "marketplaces": ups}, err
	})
}

// DELETE /marketplaces/{name}[?force=true]: forget it; refused while
// installed plugins came from it (422 install.conflict), unless force.
func (s *Server) removeMarketplace(w http.ResponseWriter, r *http.Request) {
	name, ok := s.pathName(w, r)
	if !ok {
		return
	}
	force, ok := queryBool(w, r, "force")
	if !ok {
		return
	}
	s.run(w, r, nil, func(ctx context.Context) (any, error) {
		k, users, err := s.in.RemoveMarketplace(ctx, name, force)
		return map[string]any{"ok": true, "removed": k, "unlinked": users}, err
	})
}

// GET /plugins/available[?marketplace=NAME]: what the known marketplaces
// offer, as last read, with installed and update-available marks (the JSON
// of `plugin list --available --json`).
func (s *Server) available(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("marketplace")
	list, err := s.in.Available(r.Context(), name)
	s.reply(w, r, map[string]any{"plugins": list}, err)
}

// queryBool reads an optional boolean query parameter. A value that is not
// one is answered 400 (ok false).
func queryBool(w http.ResponseWriter, r *http.Request, key string) (value, ok bool) {
	switch v := r.URL.Query().Get(key); v {
	case "", "false", "0":
		return false, true
	case "true", "1":
		return true, true
	default:
		writeError(w, http.StatusBadRequest, CodeBadRequest, "%s=%q: want true or false", key, v)
		return false, false
	}
}
