package manifest

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// corpusUnpinned pins which plugins of the real-world corpus
// (REASONIX_CORPUS) run code fetched at run time without a pin, read from
// what the corpus holds: the inline mcpServers, hooks and lspServers of
// marketplace entries and plugin.json files (it holds no .mcp.json or
// hooks files). Keys are "FOLDER: PLUGIN" (the corpus folder, the
// plugin's name), each listing its unpinned fetches (runner, package,
// version): the Qwen ones name a git tag (or a branch), which may move; thumbgate no
// version at all.
var corpusUnpinned = map[string]string{
	"QwenLM__Qwen-MM-Plugins: qwen-mm-plugins-api":          "uvx qwen-mm-plugins @ git+https://github.com/QwenLM/Qwen-MM-Plugins.git @qwen-mm-plugins-api-v1.0.5",
	"QwenLM__Qwen-MM-Plugins: qwen-mm-plugins-blender":      "uvx qwen-mm-plugins @ git+https://github.com/QwenLM/Qwen-MM-Plugins.git @qwen-mm-plugins-blender-v1.0.2",
	"QwenLM__Qwen-MM-Plugins: qwen-mm-plugins-core":         "uvx qwen-mm-plugins @ git+https://github.com/QwenLM/Qwen-MM-Plugins.git @qwen-mm-plugins-core-v1.0.4",
	"QwenLM__Qwen-MM-Plugins: qwen-mm-plugins-example":      "uvx qwen-mm-plugins @ git+https://github.com/QwenLM/Qwen-MM-Plugins.git @main",
	"QwenLM__Qwen-MM-Plugins: qwen-mm-plugins-freecad":      "uvx qwen-mm-plugins @ git+https://github.com/QwenLM/Qwen-MM-Plugins.git @qwen-mm-plugins-freecad-v1.0.2",
	"QwenLM__Qwen-MM-Plugins: qwen-mm-plugins-search":       "uvx qwen-mm-plugins @ git+https://github.com/QwenLM/Qwen-MM-Plugins.git @qwen-mm-plugins-search-v1.0.4",
	"QwenLM__Qwen-MM-Plugins: qwen-mm-plugins-video-edit":   "uvx qwen-mm-plugins @ git+https://github.com/QwenLM/Qwen-MM-Plugins.git @qwen-mm-plugins-video-edit-v1.0.2",
	"QwenLM__Qwen-MM-Plugins: qwen-mm-plugins-video-memory": "uvx qwen-mm-plugins @ git+https://github.com/QwenLM/Qwen-MM-Plugins.git @qwen-mm-plugins-video-memory-v1.0.3",
	"davepoon__buildwithclaude: thumbgate":                  "npx thumbgate",
}

// corpusPinned counts the plugins whose every run-time fetch is pinned,
// and corpusRemote those that only talk to remote MCP services.
const corpusPinned, corpusRemote = 0, 4

func TestCorpusRuntimeFetches(t *testing.T) {
	t.Parallel()
	dir := fakegithub.CorpusDir(t)
	unpinned, pinned, remote := map[string]string{}, 0, 0
	seen := map[string]bool{}
	read, declaring := map[string]bool{}, map[string]bool{}
	visit := func(folder string, decl inlineDecl) {
		p := decl.pkg()
		read[folder+": "+decl.Name] = true
		if len(p.Hooks)+len(p.MCPServers)+len(p.LSPServers) > 0 {
			declaring[folder+": "+decl.Name] = true
		}
		fetches := RuntimeFetchesOf(p)
		if len(fetches) == 0 {
			return
		}
		key := folder + ": " + decl.Name
		if seen[key] {
			return // an entry and its plugin.json declaring the same
		}
		seen[key] = true
		var runners []string
		code := false
		for _, f := range fetches {
			code = code || f.Kind == FetchCode
			if f.Unpinned() {
				runners = append(runners, strings.TrimSuffix(f.Runner+" "+f.Package+" @"+f.Version, " @"))
			}
		}
		switch {
		case len(runners) > 0:
			slices.Sort(runners)
			unpinned[key] = strings.Join(slices.Compact(runners), ", ")
		case code:
			pinned++
		default:
			remote++
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_schemas" {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, "marketplace.at-") {
			return nil // older copies of a marketplace repeat it
		}
		rel, _ := filepath.Rel(dir, p)
		folder := strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(name, "marketplace") {
			var doc struct {
				Plugins []json.RawMessage `json:"plugins"`
			}
			if json.Unmarshal(data, &doc) != nil {
				return nil // malformed ones are the parsers' tests' business
			}
			for _, raw := range doc.Plugins {
				var decl inlineDecl
				if json.Unmarshal(raw, &decl) == nil {
					visit(folder, decl)
				}
			}
			return nil
		}
		var decl inlineDecl
		if json.Unmarshal(data, &decl) == nil {
			visit(folder, decl)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range unpinned {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		t.Logf("unpinned: %s: %s", k, unpinned[k])
	}
	t.Logf("of %d plugins (entries and plugin.json files, by name), %d declare hooks, MCP or LSP servers inline: %d run unpinned code fetched at run time, %d only pinned code, %d only remote services",
		len(read), len(declaring), len(unpinned), pinned, remote)
	for _, k := range keys {
		if corpusUnpinned[k] != unpinned[k] {
			t.Errorf("%s: unpinned %q, want %q", k, unpinned[k], corpusUnpinned[k])
		}
	}
	for k := range corpusUnpinned {
		if _, ok := unpinned[k]; !ok {
			t.Errorf("%s: no unpinned fetch found, want %q", k, corpusUnpinned[k])
		}
	}
	if pinned != corpusPinned || remote != corpusRemote {
		t.Errorf("%d pinned-only and %d remote-only plugins, want %d and %d", pinned, remote, corpusPinned, corpusRemote)
	}
}

// inlineDecl is what a marketplace entry or plugin.json declares inline:
// the objects among mcpServers, hooks and lspServers (paths to files the
// corpus does not hold are left).
type inlineDecl struct {
	Name       string          `json:"name"`
	MCPServers json.RawMessage `json:"mcpServers"`
	Hooks      json.RawMessage `json:"hooks"`
	LSPServers json.RawMessage `json:"lspServers"`
}

// pkg is the declaration as a package's inventory would list it.
func (d inlineDecl) pkg() *Package {
	p := &Package{Name: d.Name}
	var mcp map[string]mcpSpec
	if json.Unmarshal(unwrap(d.MCPServers, "mcpServers"), &mcp) == nil {
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range mcp {
				if !yield(k) {
					return
				}
			}
		}) {
			s := mcp[name]
			tr, err := s.transport()
			if err != nil {
				continue
			}
			p.MCPServers = append(p.MCPServers, MCPServer{Name: name, Transport: tr, Command: s.Command, Args: s.Args, URL: s.URL})
		}
	}
	var lsp map[string]lspSpec
	if json.Unmarshal(unwrap(d.LSPServers, "lspServers"), &lsp) == nil {
		for name, s := range lsp {
			p.LSPServers = append(p.LSPServers, LSPServer{Name: name, Command: s.Command, Args: s.Args})
		}
	}
	var events map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"hooks"`
	}
	if json.Unmarshal(unwrap(d.Hooks, "hooks"), &events) == nil {
		for ev, groups := range events {
			for _, g := range groups {
				for _, h := range g.Hooks {
					if h.Command == "" || (h.Type != "" && h.Type != "command") {
						continue
					}
					form := HookShell
					if h.Args != nil {
						form = HookExec
					}
					p.Hooks = append(p.Hooks, Hook{Event: ev, Matcher: g.Matcher, Command: h.Command, Args: h.Args, Form: form})
				}
			}
		}
	}
	return p
}

// unwrap is {key: {…}}'s inner object, or raw itself.
func unwrap(raw json.RawMessage, key string) json.RawMessage {
	var outer map[string]json.RawMessage
	if json.Unmarshal(raw, &outer) == nil {
		if inner, ok := outer[key]; ok && len(outer) == 1 {
			return inner
		}
	}
	return raw
}
