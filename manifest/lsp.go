package manifest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind/internal/jsondoc"
)

// LSPServer is a language server a package declares (Claude's lspServers,
// or a .lsp.json file). Reasonix has no runtime for language servers, so
// they are listed as declared and not mapped: the inventory says what the
// package holds, and a package with nothing else is blocked saying so.
type LSPServer struct {
	Name       string   `json:"name"`
	Command    string   `json:"command,omitempty"`
	Args       []string `json:"args,omitempty"`
	Extensions []string `json:"extensions,omitempty"` // file extensions it serves
	Source     string   `json:"source"`
	Mapped     bool     `json:"mapped"` // always false: declared, not run
}

type lspSpec struct {
	Command             string            `json:"command"`
	Args                []string          `json:"args"`
	ExtensionToLanguage map[string]string `json:"extensionToLanguage"`
	Transport           string            `json:"transport"`
}

// compatLSP lists the LSP servers a manifest declares (an object, a path to
// a JSON file, or a list of either) and the conventional .lsp.json.
func (b *builder) compatLSP(in *compatInput) {
	b.declaredJSON(in, "lspServers", ".lsp.json", true, b.lspMap,
		func(rel string) { b.serversFile(rel, "lspServers", true, b.lspMap) }, nil)
	sort.Slice(b.pkg.LSPServers, func(i, j int) bool { return b.pkg.LSPServers[i].Name < b.pkg.LSPServers[j].Name })
}

func (b *builder) lspMap(src string, m *node) {
	if m.Kind != jsondoc.Object {
		return
	}
	for i := range m.Fields {
		name, v := m.Fields[i].Key, &m.Fields[i].Val
		var s lspSpec
		if v.Kind != jsondoc.Object || json.Unmarshal(v.Compact(), &s) != nil {
			b.warn("%s: LSP server %q is malformed; ignored", src, name)
			continue
		}
		exts := slices.Sorted(maps.Keys(s.ExtensionToLanguage))
		b.pkg.LSPServers = append(b.pkg.LSPServers, LSPServer{Name: name, Command: s.Command, Args: NonNil(s.Args), Extensions: exts, Source: src})
		b.skip("%s: LSP server %q (%s) is declared, but Reasonix has no language-server runtime; not mapped (Claude Code runs it)", src, name, strings.TrimSpace(s.Command+" "+strings.Join(s.Args, " ")))
	}
}

// declaredButUnmapped says what a package that maps nothing does hold.
func declaredButUnmapped(p *Package) string {
	if len(p.LSPServers) == 0 {
		return ""
	}
	names := make([]string, len(p.LSPServers))
	for i, s := range p.LSPServers {
		names[i] = s.Name
	}
	return fmt.Sprintf("it declares only LSP servers (%s), which Reasonix has no runtime for (Claude Code runs them; Reasonix blocks such a plugin rather than install it empty)", strings.Join(names, ", "))
}
