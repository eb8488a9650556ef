package parity

import (
	"encoding/json"
	"path"
	"strings"
)

// DetailsBlind are the command and agent files a plugin declares one by
// one (paths relative to its folder). `claude plugin details` cannot show
// them: its inventory lists the files of each declared path as a folder
// (readdir), so a declared .md file lists nothing, though Claude's loader
// loads it ("Loaded command from plugin … custom file", measured on the
// fixture's declared-files). The comparison leaves reasonix's items from
// these files out, and says so, rather than count a difference the golden
// cannot see.
type DetailsBlind map[string]bool

// DeclaredFiles reads the command and agent files declared by a plugin's
// manifest (plugin.json, nil when it has none) and its marketplace entry.
func DeclaredFiles(manifest, entry []byte) DetailsBlind {
	out := DetailsBlind{}
	for _, doc := range [][]byte{manifest, entry} {
		var fields struct {
			Commands json.RawMessage `json:"commands"`
			Agents   json.RawMessage `json:"agents"`
		}
		if json.Unmarshal(doc, &fields) != nil {
			continue
		}
		for _, raw := range []json.RawMessage{fields.Commands, fields.Agents} {
			for _, p := range declaredPaths(raw) {
				if strings.HasSuffix(strings.ToLower(p), ".md") {
					out[path.Clean(strings.TrimPrefix(p, "./"))] = true
				}
			}
		}
	}
	return out
}

// declaredPaths reads a path, a list of paths, or Claude's command map
// ({"name": {"source": path}}).
func declaredPaths(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var byName map[string]struct {
		Source string `json:"source"`
	}
	if json.Unmarshal(raw, &byName) == nil {
		var out []string
		for _, c := range byName {
			if c.Source != "" {
				out = append(out, c.Source)
			}
		}
		return out
	}
	return nil
}

// hide returns o without its commands and agents from declared files,
// noting each in r.
func (b DetailsBlind) hide(o *Ours, r *Result) *Ours {
	if len(b) == 0 {
		return o
	}
	c := *o
	keep := func(what string, in []Item) []Item {
		var out []Item
		for _, it := range in {
			if b[path.Clean(it.Path)] {
				r.Unseen = append(r.Unseen, what+" "+it.Name+" (declared file "+it.Path+")")
				continue
			}
			out = append(out, it)
		}
		return out
	}
	c.Commands, c.Agents = keep("command", o.Commands), keep("agent", o.Agents)
	return &c
}
