package installer

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"slices"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsonout"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/source"
)

// Status is a response's outcome.
type Status string

// Response statuses.
const (
	StatusPlanned Status = "planned"
	StatusApplied Status = "applied"
	StatusRefused Status = "refused"
	StatusFailed  Status = "failed"
	StatusRemoved Status = "removed"
	// StatusUpToDate: update found the installed copy already matches its source.
	StatusUpToDate Status = "up-to-date"
	// StatusPartial: a bulk plan was applied, but some of its plugins were
	// blocked, conflicting or failed (ok is false; SPEC §11).
	StatusPartial Status = "partial"
	// StatusUnchecked: nothing to apply as far as the cache knows, but some
	// plugins' sources could not be reached, so that is not "up to date"
	// (ok is false; SPEC §11).
	StatusUnchecked Status = "unchecked"
)

// Response is the structured answer of install, update and remove, printed
// by the CLI and returned by the HTTP API alike (SPEC §11). Its error
// travels as a value (errors.Is works on it to the edge); the JSON fields
// error and errorCode are derived from it when the response is written.
type Response struct {
	OK            bool      `json:"ok"`
	Status        Status    `json:"status"`
	Applied       bool      `json:"applied"`
	PlanID        string    `json:"planId"`
	ContentDigest string    `json:"contentDigest"`
	Source        string    `json:"source"`
	Resolved      *Resolved `json:"resolved"`
	Actions       []Action  `json:"actions"`
	Warnings      []string  `json:"warnings"`
	Err           error     `json:"-"`
}

// errorFields is how an error is written in JSON (SPEC §11).
type errorFields struct {
	Error     string `json:"error,omitempty"`
	ErrorCode string `json:"errorCode,omitempty"`
}

func fieldsOf(err error) errorFields {
	if err == nil {
		return errorFields{}
	}
	code := cmp.Or(plugind.CodeOf(err), plugind.CodeSourceUnreadable)
	return errorFields{Error: err.Error(), ErrorCode: string(code)}
}

// unmarshalWithErr reads a written Response or Action back: its fields
// into plain (the type without its methods, zeroed first) and error and
// errorCode into *errp.
func unmarshalWithErr[T any](data []byte, plain *T, errp *error) error {
	var f errorFields
	*plain = *new(T)
	if err := json.Unmarshal(data, plain); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*errp = nil
	if f.Error != "" || f.ErrorCode != "" {
		*errp = &plugind.Error{Code: plugind.Code(f.ErrorCode), Msg: f.Error}
	}
	return nil
}

// MarshalJSON writes the response with error and errorCode from Err.
func (r Response) MarshalJSON() ([]byte, error) {
	pieces, err := r.encode(false)
	return bytes.Join(pieces, nil), err
}

// WriteIndentedJSON writes it to w laid out as jsonout writes JSON (the
// CLI's and the daemon's answer), piece by piece: a bulk plan's is two
// megabytes, and joining them first would hold them twice.
func (r Response) WriteIndentedJSON(w io.Writer) error {
	pieces, err := r.encode(true)
	for _, p := range pieces {
		if err == nil {
			_, err = w.Write(p)
		}
	}
	return err
}

// encode encodes the response, indented or not, as pieces to write in
// order. Its actions are written as Action.MarshalJSON writes them, a
// share of them per CPU side by side (a 1,000-entry plan's took 16 ms on
// one, and laying them out 6 more, issue 24), each share through one
// Encoder, and go where the response's own encoding leaves "actions":[]
// — the first such bytes, as no key before it is "actions" and no string
// holds an unescaped quote.
func (r Response) encode(indent bool) ([][]byte, error) {
	type plain Response
	actions := r.Actions
	if len(actions) > 0 {
		actions = []Action{}
	}
	// Actions and Warnings are Response's last fields: shadowing both here
	// keeps the keys in their order (errorFields' after them).
	out, err := json.Marshal(struct {
		plain
		Actions  []Action `json:"actions"`
		Warnings []string `json:"warnings"`
		errorFields
	}{plain(r), actions, r.Warnings, fieldsOf(r.Err)})
	if indent {
		out = jsonout.Indent(make([]byte, 0, len(out)*3/2), out, 0)
	}
	if err != nil || len(r.Actions) == 0 {
		return [][]byte{out}, err
	}
	// The response's empty array is "[]" after the key; an action is at
	// depth 2 in it.
	open, sep, close, key := "[", ",", "]", `"actions":[]`
	if indent {
		open, sep, close, key = "[\n", ",\n", "\n  ]", `"actions": []`
	}
	shares, err := jsonout.Shares(len(r.Actions), func(lo, hi int) ([]byte, error) {
		// A share is laid out an action at a time, as each is encoded: a
		// compact copy of the whole share was 3 MiB more of a 1,000-entry
		// plan's garbage, each page of it a fault (issue 24).
		var one bytes.Buffer
		enc := json.NewEncoder(&one)
		share := []byte(open)
		for k := lo; k < hi; k++ {
			one.Reset()
			if err := enc.Encode(r.Actions[k].wire()); err != nil {
				return nil, err
			}
			if k > lo {
				share = append(share, sep...)
			}
			if !indent {
				share = append(share, bytes.TrimSuffix(one.Bytes(), []byte("\n"))...)
				continue
			}
			share = jsonout.Indent(append(share, "    "...), one.Bytes(), 2)
			if k == lo { // the rest are about as long
				share = slices.Grow(share, len(share)*(hi-lo)*9/8)
			}
		}
		return append(share, close...), nil
	})
	if err != nil {
		return nil, err
	}
	return jsonout.Splice(out, bytes.Index(out, []byte(key))+len(key)-1, shares, open, sep, close), nil
}

// UnmarshalJSON reads a written response back (stored plans, clients).
func (r *Response) UnmarshalJSON(data []byte) error {
	type plain Response
	return unmarshalWithErr(data, (*plain)(r), &r.Err)
}

// Code is the response's error code, "" when it has none.
func (r Response) Code() plugind.Code { return plugind.Code(fieldsOf(r.Err).ErrorCode) }

// ErrorText is the response's error message, "" when it has none.
func (r Response) ErrorText() string { return fieldsOf(r.Err).Error }

// Resolved says what a source turned into.
type Resolved struct {
	Kind   string `json:"kind"` // local, zip, github, git, marketplace
	Repo   string `json:"repo,omitempty"`
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	Subdir string `json:"subdir,omitempty"`
	// Transport says how the content arrived: git, archive, mirror, or
	// store when it was already there.
	Transport string `json:"transport,omitempty"`
	// Verified says how the content fetched for this plan was proven to be
	// the commit's: "git-tree" when its git tree id is the one the commit
	// names (a git fetch by construction, an archive by hashing it; SPEC
	// §17). Not part of the planId, like Transport.
	Verified string `json:"verified,omitempty"`
}

// Action is what a plan will do with one plugin. Like a Response, it keeps
// its error as a value; error and errorCode are derived when it is written.
type Action struct {
	Name   string        `json:"name"`
	Action ActionKind    `json:"action"`
	Status ActionStatus  `json:"status"`
	Source source.Source `json:"source"`
	Commit string        `json:"commit,omitempty"`
	// PreviousCommit is the installed commit a replace moves from.
	PreviousCommit string `json:"previousCommit,omitempty"`
	ContentDigest  string `json:"contentDigest,omitempty"`
	Root           string `json:"root,omitempty"`
	ManifestKind   string `json:"manifestKind,omitempty"`
	// ManifestSource says where the manifest came from: the plugin's own
	// file, its marketplace entry (strict: false), or both merged.
	ManifestSource string `json:"manifestSource,omitempty"`
	Version        string `json:"version,omitempty"`
	Description    string `json:"description,omitempty"`
	// DisplayName is the name the manifest shows (displayName).
	DisplayName string `json:"displayName,omitempty"`
	// DisabledByDefault: the manifest says "defaultEnabled": false, so a
	// new install is disabled (an update keeps the user's choice).
	DisabledByDefault bool `json:"disabledByDefault,omitempty"`
	Risk              Risk `json:"risk,omitempty"`
	Inventory
	Warnings        []string      `json:"warnings"`
	Err             error         `json:"-"`
	Link            bool          `json:"link,omitempty"`
	Marketplace     source.Source `json:"marketplace,omitzero"`
	MarketplaceName string        `json:"marketplaceName,omitempty"`
	// Subdir is the folder recorded beside Source (hosts other than GitHub).
	Subdir string `json:"subdir,omitempty"`
	// Transport says how its tree arrived for this plan: git, archive,
	// mirror, or store when it was already there. Not part of the planId:
	// a cold and a warm plan of the same inputs agree.
	Transport string `json:"transport,omitempty"`
	// Tag is the release tag (NAME--vVERSION) a dependency's range
	// resolved to, Commit the commit it points at, and ResolvedVersion
	// the tag's version, which its dependents' ranges are checked against
	// (SPEC §7, as Claude Code does).
	Tag             string `json:"tag,omitempty"`
	ResolvedVersion string `json:"resolvedVersion,omitempty"`
	// RenamedFrom is the installed plugin an update moves to this name:
	// its marketplace renamed it (SPEC §7). It leaves the registry in the
	// same write that publishes this one.
	RenamedFrom string `json:"renamedFrom,omitempty"`
	// Submodules are the git submodules its tree holds or lies in, each
	// with the repository it came from and the commit its parent pins
	// (SPEC §8); the contentDigest covers their files.
	Submodules []plugind.Submodule `json:"submodules,omitempty"`
	// Unchecked says why this plugin's source could not be checked now
	// (UncheckedNetwork: it could not be reached): what the action says
	// is what was cached. Not part of the planId, like Transport.
	Unchecked string `json:"unchecked,omitempty"`
	// EntryManifest and ManifestPrefer are how the package was read (its
	// marketplace entry's fields, its marketplace's format), recorded so the
	// installed copy is read the same way again.
	EntryManifest  *manifest.EntryManifest `json:"entryManifest,omitempty"`
	ManifestPrefer manifest.Kind           `json:"-"`
	// Previous and Diff describe what an update moves from and what it
	// changes in what the plugin contributes.
	Previous *Previous `json:"previous,omitempty"`
	Diff     *Diff     `json:"diff,omitempty"`
	// Dependencies are the plugins this one declares it needs; DependsOn
	// the names they resolved to (planned here or already installed);
	// DependencyOf the planned plugins that need this one. Dependency marks
	// a plugin planned only because others need it: prune removes it once
	// nothing does.
	Dependencies []manifest.Dependency `json:"dependencies,omitempty"`
	DependsOn    []string              `json:"dependsOn,omitempty"`
	DependencyOf []string              `json:"dependencyOf,omitempty"`
	Dependency   bool                  `json:"dependency,omitempty"`
	// UserConfig lists the options the plugin asks for and what this plan
	// sets for each (sensitive values never: only that they are set).
	UserConfig []ConfigOption `json:"userConfig,omitempty"`

	// config is what planning decided of its option values, sensitive ones
	// included, for apply; nil when it was not read that far.
	config *configState
	// origin is where the approved tree is read from at apply time: a local
	// folder, or a snapshot (sub)directory in the store.
	origin string
	// site is the marketplace its bare-named dependencies are looked up in
	// (nil when it came from none).
	site *depSite
	// tagMiss says why no release tag was taken for a range (the plugin
	// stays at its marketplace's commit).
	tagMiss string
	// marketCommit is the commit of its marketplace its entry was read at,
	// recorded in the registry entry (not a part of the plan: the entry's
	// pin is).
	marketCommit string
}

// ActionKind is what an action does.
type ActionKind string

// ActionStatus is where an action stands.
type ActionStatus string

// Risk grades what a package can do (SPEC §9).
type Risk string

// Action kinds, statuses and risks.
const (
	ActionInstall ActionKind = "install"
	ActionReplace ActionKind = "replace"
	ActionSkip    ActionKind = "skip"
	ActionKeep    ActionKind = "keep" // update: the installed copy is current
	ActionRemove  ActionKind = "remove"

	ActionReady     ActionStatus = "ready"
	ActionInstalled ActionStatus = "installed"
	ActionSkipped   ActionStatus = "skipped"
	ActionBlocked   ActionStatus = "blocked"
	ActionConflict  ActionStatus = "conflict"
	ActionFailed    ActionStatus = "failed"
	ActionUpToDate  ActionStatus = "up-to-date"
	ActionRemoved   ActionStatus = "removed"

	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// plainAction is an Action without its methods, so encoding one does not
// call Action.MarshalJSON again.
type plainAction Action

// wireAction is an Action as JSON has it: error and errorCode from Err.
type wireAction struct {
	plainAction
	errorFields
}

func (a Action) wire() wireAction { return wireAction{plainAction(a), fieldsOf(a.Err)} }

// MarshalJSON writes the action with error and errorCode from Err.
func (a Action) MarshalJSON() ([]byte, error) { return json.Marshal(a.wire()) }

// UnmarshalJSON reads a written action back.
func (a *Action) UnmarshalJSON(data []byte) error {
	return unmarshalWithErr(data, (*plainAction)(a), &a.Err)
}

// Code is the action's error code, "" when it has none.
func (a Action) Code() plugind.Code { return plugind.Code(fieldsOf(a.Err).ErrorCode) }

// ErrorText is the action's error message, "" when it has none.
func (a Action) ErrorText() string { return fieldsOf(a.Err).Error }

// installedName is the name the installed copy an action replaces is
// registered under: the old name of a rename, else its own.
func (a *Action) installedName() string { return cmp.Or(a.RenamedFrom, a.Name) }

// applicable reports whether apply will publish this action.
func (a *Action) applicable() bool { return a.Status == ActionReady && a.Action != ActionRemove }

// skip marks an action apply leaves out, status and err saying why.
func (a *Action) skip(status ActionStatus, err error) {
	a.Action, a.Status, a.Err = ActionSkip, status, err
}

// ErrorResponse is the response for an operation refused before any plan.
func ErrorResponse(source string, err error) *Response {
	return &Response{
		OK: false, Status: StatusRefused, Source: source,
		Actions: []Action{}, Warnings: []string{}, Err: err,
	}
}

// Inventory is what a package contributes, as plans and listings show it.
type Inventory struct {
	Compatibility string               `json:"compatibility,omitempty"`
	Skills        []manifest.Skill     `json:"skills"`
	Commands      []manifest.Command   `json:"commands"`
	Agents        []manifest.Agent     `json:"agents"`
	Hooks         []manifest.Hook      `json:"hooks"`
	MCPServers    []manifest.MCPServer `json:"mcpServers"`
	Runtime       *manifest.Runtime    `json:"runtime"`
	// LSPServers are declared, never mapped: Reasonix has no runtime for
	// them.
	LSPServers []manifest.LSPServer `json:"lspServers,omitempty"`
	// RuntimeFetches is the code its hooks, MCP servers, LSP servers and
	// runtime fetch when they run, and the remote services it talks to
	// (SPEC §17), each pinned or not; left out when there are none (plans
	// stored before it read and write the same).
	RuntimeFetches []manifest.RuntimeFetch `json:"runtimeFetches,omitempty"`
}

// emptyInventory has empty lists rather than nulls, so clients can iterate.
func emptyInventory() Inventory {
	return Inventory{Skills: []manifest.Skill{}, Commands: []manifest.Command{}, Agents: []manifest.Agent{},
		Hooks: []manifest.Hook{}, MCPServers: []manifest.MCPServer{}}
}

func inventoryOf(pkg *manifest.Package) Inventory {
	return Inventory{
		Compatibility: string(pkg.Compatibility),
		Skills:        manifest.NonNil(pkg.Skills), Commands: manifest.NonNil(pkg.Commands), Agents: manifest.NonNil(pkg.Agents),
		Hooks: manifest.NonNil(pkg.Hooks), MCPServers: manifest.NonNil(pkg.MCPServers), Runtime: pkg.Runtime,
		LSPServers: pkg.LSPServers, RuntimeFetches: pkg.RuntimeFetches,
	}
}

// unpinnedFetches lists the code fetched at run time that no pin fixes.
func (inv Inventory) unpinnedFetches() []manifest.RuntimeFetch {
	var out []manifest.RuntimeFetch
	for _, f := range inv.RuntimeFetches {
		if f.Unpinned() {
			out = append(out, f)
		}
	}
	return out
}
