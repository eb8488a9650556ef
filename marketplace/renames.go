package marketplace

import (
	"fmt"

	"reasonix.io/plugind/internal/jsondoc"
)

// Renames is a marketplace's "renames" map (Claude Code's): a plugin's old
// name → its current name, or nil when the plugin was removed. A chain
// (a → b → c) is followed to the end.
type Renames map[string]*string

// maxRenameChain is how far Claude Code follows a renames chain.
const maxRenameChain = 16

// RenameKind says what a renames map makes of a name.
type RenameKind string

// Rename kinds.
const (
	NotRenamed       RenameKind = ""           // the map does not name it
	Renamed          RenameKind = "renamed"    // it is listed under another name now
	RenameRemoved    RenameKind = "removed"    // the chain ends in null: removed from the marketplace
	RenameUnresolved RenameKind = "unresolved" // the chain leads nowhere
)

// Rename is where a renames chain leads.
type Rename struct {
	Kind RenameKind
	// To is the current name (Renamed).
	To string
	// Chain is the names followed, the old one first (and To last).
	Chain []string
	// Reason says why the chain does not resolve (Unresolved).
	Reason string
}

// Follow follows name through the map as Claude Code does: a name the map
// does not hold is not renamed; otherwise each step goes to the next name
// until one that the map does not hold, which must be listed (listed
// reports the names of the document's plugins), or until null (removed).
// A cycle, a target neither listed nor renamed, or more than
// maxRenameChain steps do not resolve.
func (r Renames) Follow(name string, listed func(string) bool) Rename {
	if _, ok := r[name]; !ok {
		return Rename{}
	}
	seen := map[string]bool{}
	chain := []string{}
	cur := name
	for range maxRenameChain {
		chain = append(chain, cur)
		if seen[cur] {
			return Rename{Kind: RenameUnresolved, Chain: chain, Reason: "a cycle"}
		}
		seen[cur] = true
		next, has := r[cur]
		if !has {
			if listed(cur) {
				return Rename{Kind: Renamed, To: cur, Chain: chain}
			}
			return Rename{Kind: RenameUnresolved, Chain: chain, Reason: fmt.Sprintf("%q is neither a listed plugin nor renamed", cur)}
		}
		if next == nil {
			return Rename{Kind: RenameRemoved, Chain: chain}
		}
		cur = *next
	}
	return Rename{Kind: RenameUnresolved, Chain: chain, Reason: "chain too deep"}
}

// renamesOf reads a document's decoded "renames". Like Claude Code, a map
// that is not an object of names and nulls is ignored when the document is
// read (validate reports it).
func renamesOf(n *jsondoc.Node) Renames {
	if n == nil || n.Kind != jsondoc.Object {
		return nil
	}
	r := make(Renames, len(n.Fields))
	for i := range n.Fields {
		switch v := &n.Fields[i].Val; v.Kind {
		case jsondoc.Null:
			r[n.Fields[i].Key] = nil
		case jsondoc.String:
			to := v.Str
			r[n.Fields[i].Key] = &to
		default:
			return nil
		}
	}
	return r
}
