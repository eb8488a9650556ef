package parity

import (
	"encoding/json"
	"fmt"
)

// Ours is what reasonix made of one entry: the action of its install
// response (SPEC §11) and, when installed, its `reasonix plugin list
// --json` record. They are read from JSON, the contract, so the parity
// tests hold whatever code produces it.
type Ours struct {
	Name string
	// Status is the action's status (installed, ready in a dry run,
	// blocked, skipped…); Reason its error; Root where it was installed;
	// Source the recorded source.
	Status, Reason, Root, Source string
	Skills                       []Item
	Commands                     []Item
	Agents                       []Item
	Hooks                        []Item // Name is the hook's event
	MCPServers                   []Item
	LSPServers                   []Item
	// Compatibility is the plan's verdict on how much maps (full,
	// partial, none); Warnings its warnings.
	Compatibility string
	Warnings      []string
	// Listed says `plugin list --json` lists it; Enabled and DisplayName
	// are what it says.
	Listed      bool
	Enabled     bool
	DisplayName string
}

// mapsNothing says reasonix read the plugin and found nothing it maps.
func (o *Ours) mapsNothing() bool {
	return o.Compatibility == "none" && len(o.Skills)+len(o.Commands)+len(o.Agents)+len(o.Hooks)+len(o.MCPServers) == 0
}

// Item is one inventory item: its name and the file it came from.
type Item struct {
	Name string
	Path string
}

// Installed reports whether reasonix installed the entry (or, in a dry
// run, would).
func (o *Ours) Installed() bool {
	return o.Status == "installed" || o.Status == "up-to-date" || o.Status == "ready"
}

type wireItem struct {
	Name   string `json:"name"`
	Event  string `json:"event"`
	Path   string `json:"path"`
	Source string `json:"source"`
}

func items(in []wireItem, hooks bool) []Item {
	out := make([]Item, 0, len(in))
	for _, w := range in {
		it := Item{Name: w.Name, Path: w.Path}
		if hooks {
			it = Item{Name: w.Event, Path: w.Source}
		}
		out = append(out, it)
	}
	return out
}

// OursSet is what reasonix made of a marketplace's entries.
type OursSet struct {
	byName map[string]*Ours
	// refused is the error of a response that refused the whole
	// marketplace (no actions): every entry is refused with it.
	refused string
}

// Get is the outcome of entry name; nil when the plan had no action for
// it.
func (s OursSet) Get(name string) *Ours {
	if s.refused != "" {
		return &Ours{Name: name, Status: "refused", Reason: s.refused}
	}
	return s.byName[name]
}

// ReadOurs reads an install response and the `plugin list --json` after
// it. A dry run's response comes without a list (nil): then whether each
// plugin would be listed, enabled and how it would be named are what its
// action says.
func ReadOurs(response, list []byte) (OursSet, error) {
	var resp struct {
		Error   string `json:"error"`
		Actions []struct {
			Name       string     `json:"name"`
			Root       string     `json:"root"`
			Source     string     `json:"source"`
			Display    string     `json:"displayName"`
			Disabled   bool       `json:"disabledByDefault"`
			Status     string     `json:"status"`
			Error      string     `json:"error"`
			Skills     []wireItem `json:"skills"`
			Commands   []wireItem `json:"commands"`
			Agents     []wireItem `json:"agents"`
			Hooks      []wireItem `json:"hooks"`
			MCPServers []wireItem `json:"mcpServers"`
			LSPServers []wireItem `json:"lspServers"`
			Compat     string     `json:"compatibility"`
			Warnings   []string   `json:"warnings"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(response, &resp); err != nil {
		return OursSet{}, fmt.Errorf("reasonix install response: %w", err)
	}
	if len(resp.Actions) == 0 && resp.Error != "" {
		return OursSet{refused: "the marketplace as a whole: " + resp.Error}, nil
	}
	out := map[string]*Ours{}
	for _, a := range resp.Actions {
		o := &Ours{
			Name: a.Name, Status: a.Status, Reason: a.Error, Root: a.Root, Source: a.Source,
			Skills: items(a.Skills, false), Commands: items(a.Commands, false), Agents: items(a.Agents, false),
			Hooks: items(a.Hooks, true), MCPServers: items(a.MCPServers, false), LSPServers: items(a.LSPServers, false),
			Compatibility: a.Compat, Warnings: a.Warnings,
		}
		if list == nil {
			o.Listed, o.Enabled, o.DisplayName = o.Installed(), !a.Disabled, a.Display
		}
		out[a.Name] = o
	}
	if list == nil {
		return OursSet{byName: out}, nil
	}
	var listed struct {
		Plugins []struct {
			Name        string `json:"name"`
			Enabled     bool   `json:"enabled"`
			DisplayName string `json:"displayName"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(list, &listed); err != nil {
		return OursSet{}, fmt.Errorf("reasonix plugin list --json: %w", err)
	}
	for _, p := range listed.Plugins {
		if o := out[p.Name]; o != nil {
			o.Listed, o.Enabled, o.DisplayName = true, p.Enabled, p.DisplayName
		}
	}
	return OursSet{byName: out}, nil
}

// MergeResponses makes one install response of several, each the install
// of one entry by name (names[i] for responses[i]): their actions in order,
// and for a response that refused its request as a whole, an action for
// that entry refused with its error, as one install of the marketplace
// would have reported it.
func MergeResponses(names []string, responses [][]byte) ([]byte, error) {
	if len(names) != len(responses) {
		return nil, fmt.Errorf("merge install responses: %d names for %d responses", len(names), len(responses))
	}
	var actions []json.RawMessage
	for i, data := range responses {
		var resp struct {
			Error     string            `json:"error"`
			ErrorCode string            `json:"errorCode"`
			Actions   []json.RawMessage `json:"actions"`
		}
		if err := json.Unmarshal(data, &resp); err != nil {
			return nil, fmt.Errorf("install response for %s: %w", names[i], err)
		}
		if len(resp.Actions) == 0 && resp.Error != "" {
			refused, err := json.Marshal(map[string]string{"name": names[i], "status": "refused", "error": resp.Error, "errorCode": resp.ErrorCode})
			if err != nil {
				return nil, err
			}
			actions = append(actions, refused)
			continue
		}
		actions = append(actions, resp.Actions...)
	}
	return json.Marshal(map[string]any{"actions": actions})
}
