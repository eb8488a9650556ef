package parity

import (
	"encoding/json"
	"path"
	"strings"
)

// DetailsBlind says which of a plugin's command and agent files `claude
// plugin details` cannot show. Its inventory reads each command and agent
// path as a folder and lists only the .md files directly in it (readdir):
//   - a path declared as a .md file lists nothing, though Claude's loader
//     loads the file ("Loaded command from plugin … custom file", measured
//     on the fixture's declared-files);
//   - a file in a subfolder is not listed, though Claude's loader reads the
//     folders recursively and a session has it as plugin:sub:name
//     (measured on the fixture's nested: the session's init message lists
//     nested:grp:cmd and nested:sub:foo; details lists neither).
//
// A comparison with details (the corpus goldens) leaves reasonix's items
// from such files out, and says so, rather than count a difference the
// golden cannot see; one with a session (the fixture's) holds them all.
type DetailsBlind struct {
	// files are the .md files declared one by one; folders the folders
	// details lists, both relative to the plugin's folder.
	files, folders map[string]bool
}

// DetailsView reads what details lists of a plugin from its manifest
// (plugin.json, nil when it has none) and its marketplace entry: the
// folders and files their commands and agents fields declare, and the
// default commands/ and agents/ folders unless plugin.json declares that
// field (Claude reads the default folder beside an entry's declarations).
func DetailsView(manifest, entry []byte) DetailsBlind {
	b := DetailsBlind{files: map[string]bool{}, folders: map[string]bool{}}
	for _, field := range []string{"commands", "agents"} {
		if !declares(manifest, field) {
			b.folders[field] = true
		}
		for _, doc := range [][]byte{manifest, entry} {
			for _, p := range declaredPaths(fieldOf(doc, field)) {
				clean := path.Clean(strings.TrimPrefix(p, "./"))
				if strings.HasSuffix(strings.ToLower(clean), ".md") {
					b.files[clean] = true
				} else {
					b.folders[clean] = true
				}
			}
		}
	}
	return b
}

func fieldOf(doc []byte, field string) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(doc, &fields) != nil {
		return nil
	}
	return fields[field]
}

func declares(doc []byte, field string) bool {
	raw := fieldOf(doc, field)
	return len(raw) > 0 && string(raw) != "null"
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

// unseen says why details cannot show the file at p ("" when it can).
func (b DetailsBlind) unseen(p string) string {
	p = path.Clean(p)
	switch {
	case b.folders[path.Dir(p)]:
		return ""
	case b.files[p]:
		return "declared file " + p
	}
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if b.folders[d] {
			return "file " + p + " in a subfolder of " + d
		}
	}
	return ""
}

// hide returns o without its commands and agents from files details
// cannot show, noting each in r.
func (b DetailsBlind) hide(o *Ours, r *Result) *Ours {
	if b.folders == nil {
		return o
	}
	c := *o
	keep := func(what string, in []Item) []Item {
		var out []Item
		for _, it := range in {
			if why := b.unseen(it.Path); why != "" {
				r.Unseen = append(r.Unseen, what+" "+it.Name+" ("+why+")")
				continue
			}
			out = append(out, it)
		}
		return out
	}
	c.Commands, c.Agents = keep("command", o.Commands), keep("agent", o.Agents)
	return &c
}
