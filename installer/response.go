package installer

import (
	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
)

// Response is the structured answer of install, update and remove, printed
// by the CLI and returned by the HTTP API alike (SPEC §11).
type Response struct {
	OK            bool      `json:"ok"`
	Status        string    `json:"status"`
	Applied       bool      `json:"applied"`
	PlanID        string    `json:"planId"`
	ContentDigest string    `json:"contentDigest"`
	Source        string    `json:"source"`
	Resolved      *Resolved `json:"resolved"`
	Actions       []Action  `json:"actions"`
	Warnings      []string  `json:"warnings"`
	Error         string    `json:"error,omitempty"`
	ErrorCode     string    `json:"errorCode,omitempty"`
}

// Response statuses.
const (
	StatusPlanned = "planned"
	StatusApplied = "applied"
	StatusRefused = "refused"
	StatusFailed  = "failed"
	StatusRemoved = "removed"
	// StatusUpToDate: update found the installed copy already matches its source.
	StatusUpToDate = "up-to-date"
)

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
}

// Action is what a plan will do with one plugin.
type Action struct {
	Name   string `json:"name"`
	Action string `json:"action"` // install, replace, skip
	Status string `json:"status"` // ready, installed, skipped, blocked, conflict, failed
	Source string `json:"source"`
	Commit string `json:"commit,omitempty"`
	// PreviousCommit is the installed commit a replace moves from.
	PreviousCommit string `json:"previousCommit,omitempty"`
	ContentDigest  string `json:"contentDigest,omitempty"`
	Root           string `json:"root,omitempty"`
	ManifestKind   string `json:"manifestKind,omitempty"`
	Version        string `json:"version,omitempty"`
	Description    string `json:"description,omitempty"`
	Risk           string `json:"risk,omitempty"`
	Inventory
	Warnings    []string `json:"warnings"`
	Error       string   `json:"error,omitempty"`
	ErrorCode   string   `json:"errorCode,omitempty"`
	Link        bool     `json:"link,omitempty"`
	Marketplace string   `json:"marketplace,omitempty"`
	// Subdir is the folder recorded beside Source (hosts other than GitHub).
	Subdir string `json:"subdir,omitempty"`

	// origin is where the approved tree is read from at apply time: a local
	// folder, or a snapshot (sub)directory in the store.
	origin string
}

// Action kinds and statuses.
const (
	ActionInstall = "install"
	ActionReplace = "replace"
	ActionSkip    = "skip"
	ActionKeep    = "keep" // update: the installed copy is current

	ActionReady     = "ready"
	ActionInstalled = "installed"
	ActionSkipped   = "skipped"
	ActionBlocked   = "blocked"
	ActionConflict  = "conflict"
	ActionFailed    = "failed"
	ActionUpToDate  = "up-to-date"
)

// applicable reports whether apply will publish this action.
func (a *Action) applicable() bool { return a.Status == ActionReady }

func (a *Action) fail(status string, err error) {
	a.Status = status
	a.Error = err.Error()
	a.ErrorCode = string(plugind.CodeOf(err))
}

// ErrorResponse is the response for an operation refused before any plan.
func ErrorResponse(source string, err error) *Response {
	code := plugind.CodeOf(err)
	if code == "" {
		code = plugind.CodeSourceUnreadable
	}
	return &Response{
		OK: false, Status: StatusRefused, Source: source,
		Actions: []Action{}, Warnings: []string{},
		Error: err.Error(), ErrorCode: string(code),
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
}

// emptyInventory has empty lists rather than nulls, so clients can iterate.
func emptyInventory() Inventory {
	return Inventory{Skills: []manifest.Skill{}, Commands: []manifest.Command{}, Agents: []manifest.Agent{},
		Hooks: []manifest.Hook{}, MCPServers: []manifest.MCPServer{}}
}

func inventoryOf(pkg *manifest.Package) Inventory {
	return Inventory{
		Compatibility: string(pkg.Compatibility),
		Skills:        nonNil(pkg.Skills), Commands: nonNil(pkg.Commands), Agents: nonNil(pkg.Agents),
		Hooks: nonNil(pkg.Hooks), MCPServers: nonNil(pkg.MCPServers), Runtime: pkg.Runtime,
	}
}
