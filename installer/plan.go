package installer

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsonout"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/source"
)

// Request is an install (or plan) request from the CLI or the API.
type Request struct {
	// Source was parsed as the request was decoded (the CLI's argument,
	// the daemon's JSON); the zero Source is none (an approval that replays
	// a stored plan).
	Source source.Source `json:"source"`
	Name   string        `json:"name,omitempty"`
	// Names narrows a marketplace plan to these entries.
	Names         []string `json:"names,omitempty"`
	Replace       bool     `json:"replace,omitempty"`
	Link          bool     `json:"link,omitempty"`
	Offline       bool     `json:"offline,omitempty"`
	AllowUnpinned bool     `json:"allowUnpinned,omitempty"`
	Refresh       bool     `json:"refresh,omitempty"`
	// The planId that approves a plan of this request is not part of it:
	// the Approval carries it.
	// Subdir names the folder of a recorded source on a host whose pinned
	// form cannot carry one (update re-plans from the registry with it).
	Subdir string `json:"subdir,omitempty"`
	// An update is not a Request with a flag: it is an UpdateRequest
	// (Installer.Update), with a Request for its options only.
	// Config gives userConfig values as typed: "KEY" → VALUE for the
	// plugins that declare KEY (one, or say which), "NAME.KEY" → VALUE for
	// plugin NAME's. A stored plan keeps only the non-sensitive ones
	// (StoredConfig).
	Config map[string]string `json:"config,omitempty"`

	// configOf is the installed plugin whose values an update keeps, when
	// it is not the one of the planned name (a rename).
	configOf string
}

// Plan is what an install would do. It is computed fresh for every install
// and approved by its planId.
type Plan struct {
	// Request is what the plan was made from, as read: a NAME@MARKET
	// source selects its entry by Name.
	Request       Request
	PlanID        PlanID
	ContentDigest string
	Source        string
	Resolved      *Resolved
	Actions       []Action
	Warnings      []string
	Snapshots     []string
	// single is set when the source offers one plugin (not a marketplace):
	// then that plugin's failure is the operation's failure.
	single bool
	// update is the update this plan was made for (nil for an install):
	// keep actions make it up to date.
	update *UpdateRequest
	// sync is what a sync plan does besides its actions (nil for any
	// other plan).
	sync *syncPlan
	// markets are the marketplaces read for this plan, recorded as known
	// when it is applied.
	markets []marketRecord
	// asked is the request as it was asked: what the plan store keeps, so
	// an approval by planId replays it exactly.
	asked Request
}

// marketRecord is a marketplace a plan read.
type marketRecord struct {
	market  *resolver.Market
	subdir  string
	entries int
}

// plan resolves req's source and plans every plugin it offers. It writes
// nothing outside the cache and the store.
func (in *Installer) plan(ctx context.Context, req Request) (*Plan, error) {
	names := req.Names
	if req.Name != "" {
		names = append([]string{req.Name}, names...)
	}
	for _, n := range names {
		if err := plugind.ValidateName(n); err != nil {
			return nil, err
		}
	}
	if err := CheckConfigKeys(req.Config); err != nil {
		return nil, err
	}
	if req.Name != "" && len(req.Names) > 0 {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "name selects one entry and names several: give one or the other")
	}
	req.Names = sortedUnique(req.Names)
	// The request is stored as it was asked, so approving the plan by its
	// planId replays exactly this; req becomes what it reads as.
	asked := req
	read, err := in.readSource(req.Source, req.Subdir)
	if err != nil {
		return nil, err
	}
	src := read.src
	if read.entry != "" {
		// NAME@MARKET: entry NAME of the known marketplace MARKET.
		if req.Name != "" || len(req.Names) > 0 {
			return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s already names the entry; --name does not go with it", req.Source)
		}
		req.Name = read.entry
	}
	// The registry is decoded while the source resolves: neither needs the
	// other, and on a warm re-plan each is a third of the work (issue 24).
	// Its error still comes first, as when it was read before resolving.
	// Then, still beside the resolve, the manifests of the plugins it has
	// from this source are read ahead, as an unchanged re-plan asks for
	// them (planCandidates reads only what is still missing); not in the
	// daemon, which keeps the ones it decoded (Decoded).
	var reg *Registry
	var regRead errgroup.Group
	mans := in.manifests()
	regRead.Go(func() (err error) {
		if reg, err = in.plannedRegistry(); err == nil && in.Decoded == nil {
			mans.readAhead(ctx, installedKeys(req, src, reg))
		}
		return err
	})
	f, err := in.Sources.Resolve(ctx, resolver.Request{
		Source: src, Name: req.Name, Names: req.Names, Link: req.Link, KnownMarket: read.market != "",
		Offline: req.Offline, AllowUnpinned: req.AllowUnpinned, Refresh: req.Refresh,
	})
	if err := regRead.Wait(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	p := &Plan{
		Request:   req,
		asked:     asked,
		Source:    f.Source.String(),
		Resolved:  &Resolved{Kind: f.Kind, Repo: f.Repo, Ref: f.Ref, Commit: f.Commit, Subdir: f.Subdir, Transport: f.Transport, Verified: f.Verified},
		Warnings:  append([]string{}, f.Warnings...),
		Snapshots: f.Snapshots,
		single:    f.Kind != resolver.KindMarketplace,
	}
	marketName := ""
	if f.Market != nil {
		if err := marketplace.CheckReservedName(f.Market.Name, f.Market.Source); err != nil {
			return nil, err
		}
		if marketName = in.marketNameFor(f, &p.Warnings); marketName != "" {
			p.markets = append(p.markets, marketRecord{market: f.Market, subdir: recordedSubdir(f), entries: len(f.Candidates)})
		}
	}
	site := siteOf(src, f, marketName)
	if len(f.Candidates) > 0 {
		p.Actions = in.planCandidates(ctx, req, f.Candidates, p.single, reg, mans)
	}
	for i := range p.Actions { // in place: an Action is a kilobyte
		p.Actions[i].MarketplaceName, p.Actions[i].site = marketName, site
	}
	if err := checkDuplicateNames(p.Actions); err != nil {
		return nil, err
	}
	if err := in.planDependencies(ctx, req, p, reg); err != nil {
		return nil, err
	}
	for _, a := range p.Actions {
		if (!p.single || a.Dependency) && !a.applicable() && a.Err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s %s: %s", a.Status, a.Name, a.Err))
		}
	}
	notePlaceMoves(p.Actions, reg)
	if err := p.seal(); err != nil {
		return nil, err
	}
	return p, nil
}

// seal ends every plan, an install's or an update's: a --config value
// that lands on no option refuses it; then its actions in name order, the
// digest of their content and the planId over the whole, which an approval
// must present again.
func (p *Plan) seal() error {
	if err := checkConfigUse(p.Request, p.Actions); err != nil {
		return err
	}
	sort.SliceStable(p.Actions, func(i, j int) bool { return p.Actions[i].Name < p.Actions[j].Name })
	p.ContentDigest = contentDigest(p.Actions)
	p.PlanID = planID(p)
	return nil
}

// notePlaceMoves gives every replace that moves the plugin to another
// place (host, owner, repository or subfolder) the move as its diff, on
// its own line, and raises its risk by one level, as an update's review
// does (SPEC §9): re-installing a marketplace whose entry now points at
// another repository is the same swap as updating from it.
func notePlaceMoves(actions []Action, reg *Registry) {
	for i := range actions {
		a := &actions[i]
		if a.Action != ActionReplace || !a.applicable() {
			continue
		}
		e, ok := reg.Find(a.Name)
		if !ok || e.Source == a.Source && e.Subdir == a.Subdir { // the same place (most re-plans)
			continue
		}
		d := emptyDiff()
		d.addMove(e.Source, e.Subdir, a.Source, a.Subdir)
		if d.moves() {
			a.Diff, a.Risk = d, oneAbove(a.Risk)
		}
	}
}

// planCandidate plans one candidate, its manifest read through m (nil: no
// cache).
func (in *Installer) planCandidate(ctx context.Context, req Request, c resolver.Candidate, single bool, reg *Registry, m *manifests) Action {
	a := Action{
		Name: c.Name, Action: ActionInstall, Status: ActionReady, Source: c.Source, Subdir: c.Subdir,
		Commit: c.Commit, Link: c.Link, Marketplace: c.Marketplace, origin: c.Dir, Transport: c.Transport, Unchecked: c.Unchecked,
		Tag: c.Tag, ResolvedVersion: c.TagVersion, tagMiss: c.TagMiss, Submodules: c.Submodules, marketCommit: c.MarketCommit,
		Inventory: emptyInventory(), Warnings: append([]string{}, c.Warnings...),
	}
	if c.Err != nil {
		if c.Skip {
			a.skip(ActionSkipped, c.Err)
		} else {
			a.skip(ActionBlocked, c.Err)
		}
		return a
	}
	a.EntryManifest, a.ManifestPrefer = c.Manifest, c.Prefer
	pkg, err := in.loadManifest(ctx, c, loadOptions(req, c, single), m)
	if err != nil {
		if c.Digest != "" && !c.Source.IsZero() {
			// A store path means nothing to the user; the source does.
			err = &plugind.Error{Code: plugind.CodeOf(err), Msg: strings.ReplaceAll(err.Error(), c.Dir, c.Source.String())}
		}
		a.skip(ActionBlocked, plugind.WithCode(plugind.CodeInvalidSource, err))
		return a
	}
	if a.Name == "" {
		a.Name = pkg.Name
	} else if pkg.ManifestName != "" && pkg.ManifestName != a.Name {
		a.Warnings = append(a.Warnings, fmt.Sprintf("its manifest calls it %q; it is installed under its marketplace entry's name %q", pkg.ManifestName, a.Name))
	}
	a.ManifestSource = pkg.ManifestSource
	a.Dependencies = pkg.Dependencies
	a.ManifestKind = string(pkg.Kind)
	a.Version, a.Description = pkg.Version, pkg.Description
	if a.Tag != "" && pkg.Version != "" && pkg.Version != a.ResolvedVersion {
		a.Warnings = append(a.Warnings, fmt.Sprintf("release tag %s points at a commit whose manifest says version %s; its dependents' ranges are checked against the tag's %s, as Claude Code does", a.Tag, pkg.Version, a.ResolvedVersion))
	}
	a.DisplayName, a.DisabledByDefault = pkg.DisplayName, pkg.DisabledByDefault
	a.Inventory = inventoryOf(pkg)
	a.Warnings = append(a.Warnings, pkg.Warnings...)
	a.Risk = inventoryRisk(a.Inventory)
	if err := plugind.ValidateName(a.Name); err != nil {
		a.skip(ActionBlocked, err)
		return a
	}
	if pkg.Blocked {
		a.skip(ActionBlocked, plugind.Errorf(plugind.CodeBlocked, "%s cannot be installed: %s", a.Name, pkg.BlockReason))
		return a
	}
	if !a.Link {
		a.ContentDigest = c.Digest
		if a.ContentDigest == "" {
			digest, _, err := plugind.TreeDigest(c.Dir, in.Budget)
			if err != nil {
				a.skip(ActionBlocked, err)
				return a
			}
			a.ContentDigest = digest
		}
	}
	installed, _ := reg.Find(cmp.Or(req.configOf, a.Name))
	shown, cfgErr := in.configure(req, single, &a, pkg, installed)
	a.Inventory = inventoryOf(shown)
	if existing, ok := reg.Find(a.Name); ok {
		if !req.Replace {
			same := sameInstall(existing, a)
			if same && cfgErr == nil && !a.config.changed {
				// Installing exactly what is installed is a no-op, as brew
				// and apt have it; --replace reinstalls (a repair).
				k := keepAction(*existing, fmt.Sprintf("%s is installed from this source with this content already: nothing to do (--replace reinstalls it)", a.Name))
				k.Inventory, k.Risk, k.Dependencies, k.UserConfig, k.config = a.Inventory, a.Risk, a.Dependencies, a.UserConfig, a.config
				return k
			}
			why := "rerun with --replace to replace it"
			if same {
				why = "rerun with --replace to install it again with this configuration"
			}
			a.skip(ActionConflict, plugind.Errorf(plugind.CodeConflict, "plugin %q is already installed (from %s); %s", a.Name, existing.Source, why))
			return a
		}
		a.Action = ActionReplace
		a.PreviousCommit = existing.Commit
	} else if a.DisabledByDefault {
		a.Warnings = append(a.Warnings, fmt.Sprintf("disabled by default (defaultEnabled: false): it is installed disabled; enable it with: reasonix plugin enable %s", a.Name))
	}
	if cfgErr != nil {
		a.skip(ActionBlocked, cfgErr)
		return a
	}
	if a.Link {
		a.Root = c.Dir
		a.Warnings = append(a.Warnings, "linked: the plugin runs from "+c.Dir+" and has no content pin; moving or deleting that folder breaks it")
		return a
	}
	a.Root = in.Home.PluginRoot(a.Name)
	return a
}

// sameInstall reports a planned copy identical to the installed one: the
// same recorded source and folder, the same content. A linked plugin has
// no content pin, so it is never "the same".
func sameInstall(e *Entry, a Action) bool {
	return !e.Link && !a.Link && e.Source == a.Source && e.Subdir == a.Subdir &&
		e.ContentDigest != "" && e.ContentDigest == a.ContentDigest
}

// planCandidates plans cands, their manifests read and written through
// m (nil: no cache): those neither decoded before nor read ahead are read
// in one query (a plan of N entries otherwise asked N times).
func (in *Installer) planCandidates(ctx context.Context, req Request, cands []resolver.Candidate, single bool, reg *Registry, m *manifests) []Action {
	if m != nil {
		var keys []string
		for _, c := range cands {
			if c.Err == nil && c.Digest != "" {
				if k := manifestKey(c, loadOptions(req, c, single)); !in.Decoded.Has(k) {
					keys = append(keys, k)
				}
			}
		}
		m.invs.LoadInventories(ctx, keys)
		defer func() { _ = m.invs.Commit(ctx) }()
	}
	// Candidates are planned side by side (each reads its own manifest and
	// config), in their order (issue 24: a warm re-plan's largest part).
	out := make([]Action, len(cands))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, c := range cands {
		g.Go(func() error {
			out[i] = in.planCandidate(ctx, req, c, single, reg, m)
			return nil
		})
	}
	_ = g.Wait()
	return out
}

func checkDuplicateNames(actions []Action) error {
	seen := map[string]bool{}
	for _, a := range actions {
		if a.Name == "" || a.Status != ActionReady {
			continue
		}
		if seen[a.Name] {
			return plugind.Errorf(plugind.CodeInvalidSource, "two plugins in this source are named %q", a.Name)
		}
		seen[a.Name] = true
	}
	return nil
}

// inventoryRisk grades what a package can do: a runtime is full trust;
// hooks that run commands, launchable MCP servers and code fetched at run
// time without a pin (SPEC §17: an LSP server's too) execute code; the
// rest is text.
func inventoryRisk(inv Inventory) Risk {
	switch {
	case inv.Runtime != nil:
		return RiskHigh
	case len(inv.MCPServers) > 0, slices.ContainsFunc(inv.Hooks, func(h manifest.Hook) bool { return h.Command != "" }),
		len(inv.unpinnedFetches()) > 0:
		return RiskMedium
	}
	return RiskLow
}

// marketNameFor is the name the plugins of marketplace f are recorded
// under: the document's, unless another source is known by that name (then
// they are not linked to any, with a warning).
func (in *Installer) marketNameFor(f *resolver.Fetched, warnings *[]string) string {
	known, err := LoadMarketplaces(in.Home.MarketplacesPath())
	if err != nil {
		*warnings = append(*warnings, err.Error())
		return ""
	}
	if k, ok := known.Find(f.Market.Name); ok && (k.Source != f.Market.Source || k.Subdir != recordedSubdir(f)) {
		*warnings = append(*warnings, fmt.Sprintf("another marketplace is known as %q (%s): these plugins are not linked to a known marketplace; update follows their pinned sources", f.Market.Name, k.Source))
		return ""
	}
	if plugind.ValidateName(f.Market.Name) != nil {
		return ""
	}
	return f.Market.Name
}

var riskRank = map[Risk]int{RiskLow: 0, RiskMedium: 1, RiskHigh: 2}

// contentDigest binds the plan to exact content: sha256 over each applicable
// action's (name, source, commit, tree digest). A linked action has no
// content pin, so neither has the plan.
func contentDigest(actions []Action) string {
	h := sha256.New()
	n := 0
	for _, a := range actions {
		if !a.applicable() {
			continue
		}
		if a.Link {
			return ""
		}
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\n", a.Name, a.Source, a.Commit, a.ContentDigest)
		n++
	}
	if n == 0 {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// planID hashes what the user approves: the options that change the result
// and every action's identity and outcome. Nothing machine- or time-specific
// (roots, cache ages, offline-ness) enters it, so the same inputs give the
// same planId online or offline, anywhere.
func planID(p *Plan) PlanID {
	type act struct {
		Name, Action, Status, Source, Commit, Digest, Kind, Compat, Risk string
		Link                                                             bool
		// An update's approval covers where it moves from and what it adds.
		Previous *Previous `json:",omitempty"`
		Diff     []string  `json:",omitempty"`
		// What it needs and whether it goes in only as a dependency.
		DependsOn  []string `json:",omitempty"`
		Dependency bool     `json:",omitempty"`
		// The release tag a range took it at, and the plugin it renames.
		Tag         string `json:",omitempty"`
		RenamedFrom string `json:",omitempty"`
		// Its non-sensitive option values, and which sensitive ones are set.
		Config []string `json:",omitempty"`
		// The code it fetches at run time that no pin fixes (SPEC §17):
		// its digest fixes the commands, but a linked plugin has none.
		Unpinned []string `json:",omitempty"`
		// Its submodules are not listed: their commits and URLs follow
		// from its commit (the gitlinks and .gitmodules it pins) and its
		// source, and their files are in its digest.
	}
	body := struct {
		Source string
		Name   string
		Names  []string       `json:",omitempty"`
		Update *UpdateRequest `json:",omitempty"`
		// A sync's approval covers the enabled states it sets and what it
		// removes (its installs and moves are actions).
		Prune, Frozen                          bool     `json:",omitempty"`
		Enable, Disable, Remove, Learn, Relink []string `json:",omitempty"`
		Replace, Link                          bool
		AllowUnpinned                          bool
		Actions                                []act
	}{Source: p.Source, Name: p.Request.Name, Names: p.Request.Names, Update: p.update, Replace: p.Request.Replace, Link: p.Request.Link, AllowUnpinned: p.Request.AllowUnpinned}
	body.Enable, body.Disable, body.Remove, body.Learn, body.Relink = p.sync.planned()
	if p.sync != nil {
		body.Prune, body.Frozen = p.sync.req.Prune, p.sync.req.Frozen
	}
	top := RiskLow
	for _, a := range p.Actions {
		if a.applicable() && riskRank[a.Risk] > riskRank[top] {
			top = a.Risk
		}
	}
	actOf := func(a *Action) act {
		if !a.applicable() {
			// SPEC §9: skipped and blocked entries count by name and status
			// only, so an online and an offline plan of the same inputs
			// agree even when their reasons are worded differently.
			return act{Name: a.Name, Status: string(a.Status)}
		}
		it := act{a.Name, string(a.Action), string(a.Status), a.Source.String(), a.Commit, a.ContentDigest, a.ManifestKind, a.Compatibility, string(a.Risk), a.Link, a.Previous, nil, a.DependsOn, a.Dependency, a.Tag, a.RenamedFrom, configSummary(a), nil}
		if a.Diff != nil {
			it.Diff = a.Diff.Summary
		}
		for _, f := range a.Inventory.unpinnedFetches() {
			it.Unpinned = append(it.Unpinned, f.Describe())
		}
		return it
	}
	// The actions are encoded a share per CPU (4-5 ms of a 1,000-entry
	// plan on one) into the body's empty array, its last field, so its
	// "]" is the body's last byte but one: the bytes json.Marshal gives
	// the whole body.
	if len(p.Actions) > 0 {
		body.Actions = []act{}
	}
	head, _ := json.Marshal(body)
	shares, _ := jsonout.Shares(len(p.Actions), func(lo, hi int) ([]byte, error) {
		acts := make([]act, hi-lo)
		for k := range acts {
			acts[k] = actOf(&p.Actions[lo+k])
		}
		return json.Marshal(acts)
	})
	h := sha256.New()
	for _, piece := range jsonout.Splice(head, len(head)-2, shares, "[", ",", "]") {
		h.Write(piece)
	}
	sum := h.Sum(nil)
	return PlanID{string(top) + ":sha256:" + hex.EncodeToString(sum[:16])}
}

// Response renders p as the structured response.
func (p *Plan) Response() *Response {
	r := &Response{
		OK: true, Status: StatusPlanned, PlanID: p.PlanID.String(), ContentDigest: p.ContentDigest,
		Source: p.Source, Resolved: p.Resolved, Actions: manifest.NonNil(p.Actions), Warnings: manifest.NonNil(p.Warnings),
	}
	if err := p.failure(); err != nil {
		r.OK, r.Status = false, StatusRefused
		r.Err = err
	} else if p.upToDate() {
		r.Status = StatusUpToDate
	}
	return r
}

// upToDate reports a plan with nothing to do: what it covers is installed
// as planned (an update that moves nothing, an install of exactly what is
// installed), apart from entries skipped by policy.
func (p *Plan) upToDate() bool {
	if p.sync.changes() {
		return false
	}
	kept := 0
	for _, a := range p.Actions {
		switch {
		case a.Action == ActionKeep:
			kept++
		case a.Status == ActionSkipped && !a.Dependency:
		default:
			return false
		}
	}
	return kept > 0 || ((p.update != nil || p.sync != nil) && len(p.Actions) == 0)
}

// failure is the reason a plan cannot be applied at all: a single-plugin
// source whose plugin is not ready, or a marketplace with nothing to do.
func (p *Plan) failure() error {
	ready, kept, conflicts := 0, 0, 0
	for _, a := range p.Actions {
		switch {
		case a.applicable():
			ready++
		case a.Action == ActionKeep:
			kept++
		case a.Status == ActionConflict:
			conflicts++
		}
	}
	if p.upToDate() {
		return nil
	}
	if p.sync.changes() && (ready > 0 || kept > 0 || len(p.Actions) == 0) {
		// Enabled states to set, plugins to remove or link, marketplaces
		// to know: something to do, unless none of the locked plugins can
		// be had (then the sync fails for their reason, offline or not).
		ready++
	}
	// What the user asked for, as opposed to what it pulled in: when that
	// is one plugin, its failure is the plan's.
	var asked []*Action
	for i := range p.Actions {
		if !p.Actions[i].Dependency {
			asked = append(asked, &p.Actions[i])
		}
	}
	if i := slices.IndexFunc(asked, func(a *Action) bool { return !a.applicable() && a.Err != nil }); i >= 0 && (p.single || len(asked) == 1) {
		return asked[i].Err
	}
	if ready == 0 {
		if len(p.Actions) == 0 {
			return plugind.Errorf(plugind.CodeNotFound, "%s offers no plugins", p.Source)
		}
		switch {
		case conflicts == len(p.Actions)-kept:
			return plugind.Errorf(plugind.CodeConflict, "every plugin in %s is already installed; rerun with --replace to replace them", p.Source)
		case conflicts > 0:
			// --replace is what would make this plan do something.
			return plugind.Errorf(plugind.CodeConflict, "%d of the %d plugins in %s are already installed (rerun with --replace to replace them) and the others cannot be installed (see actions)", conflicts, len(p.Actions), p.Source)
		}
		code := plugind.CodeBlocked
		if p.sync != nil {
			// A sync names the plugins it wants: the first one's reason is
			// the sync's (a tampered digest is install.digest_mismatch).
			if i := slices.IndexFunc(asked, func(a *Action) bool { return !a.applicable() && a.Err != nil }); i >= 0 {
				code = cmp.Or(plugind.CodeOf(asked[i].Err), code)
			}
		}
		if kept > 0 {
			return plugind.Errorf(code, "nothing to do in %s: %d of its plugins are installed as planned already and the others cannot be installed (see actions)", p.Source, kept)
		}
		return plugind.Errorf(code, "none of the %d plugins in %s can be installed (see actions)", len(p.Actions), p.Source)
	}
	return nil
}

// MarshalStored is the form a plan is kept in by planId: the request as it
// was asked (non-sensitive config only) and the response. The planId that
// approved it is not kept: the row's key is that planId already. Rows
// written while Request carried a "planId" read the same (it is ignored).
func (p *Plan) MarshalStored() ([]byte, error) {
	asked := p.asked
	asked.Config = StoredConfig(asked, p.Actions)
	sr := storedRequest{Request: asked, Update: p.update}
	if p.sync != nil {
		sr.Sync = p.sync.req
	}
	return json.Marshal(StoredPlan{Request: sr, Response: p.Response()})
}

func sortedUnique(list []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(list)))
}
