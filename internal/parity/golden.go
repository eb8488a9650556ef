// Package parity holds the parity goldens of issue 22: what Claude Code
// makes of each entry of a marketplace (recorded once, offline, by
// bench/claude-side-by-side.sh --goldens), and the comparison of reasonix's
// plan with them, so tests can hold reasonix to Claude's inventory without
// Claude or the network.
//
// A golden holds names, counts and verdicts only: never a plugin's content
// (descriptions, prompts, commands), so goldens of real plugins can be
// committed.
package parity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Golden is what Claude Code made of one marketplace entry.
type Golden struct {
	Plugin      string `json:"plugin"`
	Marketplace string `json:"marketplace"`
	// Claude is `claude --version`.
	Claude string `json:"claude"`
	// Source is what the marketplace was added from: OWNER/REPO@COMMIT
	// (served by the fake GitHub), or a folder relative to the module root.
	Source string `json:"source"`
	// Harness is the command that recorded the golden; Commands are the
	// Claude commands whose output it holds, in the order they ran.
	Harness  string   `json:"harness"`
	Commands []string `json:"commands"`
	Install  Install  `json:"install"`
	// Listed says `claude plugin list --json` lists the plugin; Enabled and
	// LoadErrors are what it says of it, Notes its notes (e.g. a default
	// folder ignored because the manifest declares that component).
	Listed     bool     `json:"listed"`
	Enabled    bool     `json:"enabled"`
	LoadErrors []string `json:"loadErrors,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	// DisplayName is the name `claude plugin details` shows before the
	// plugin's own name, when it shows one; Version is the version it shows
	// (the manifest's or the entry's).
	DisplayName string `json:"displayName,omitempty"`
	Version     string `json:"version,omitempty"`
	// ClaudeName is the name details shows when it is not the entry's:
	// Claude loads a plugin under its manifest's name.
	ClaudeName string `json:"claudeName,omitempty"`
	// Details is `claude plugin details`' component inventory (nil when
	// Claude has no details for the plugin).
	Details *Details `json:"details,omitempty"`
	// Session is what a Claude Code session loaded of the plugin, when the
	// harness recorded one (the fixture only: see Session). The comparison
	// holds agents and commands to it rather than to details, which does
	// not see nested files and names agents by file.
	Session *Session `json:"session,omitempty"`
	// LoadedMCPServers are the MCP servers `claude plugin list --json`
	// gives the plugin: what a Claude session starts. details' own MCP list
	// reads only .mcp.json (or the marketplace entry) and misses servers
	// declared inline in plugin.json, so the comparison uses this one.
	LoadedMCPServers []string `json:"loadedMcpServers"`
}

// Install is how `claude plugin install NAME@MARKET` ended.
type Install struct {
	Exit int `json:"exit"`
	// Error is its failure message, on one line, with the throwaway home
	// and work folders replaced by placeholders.
	Error string `json:"error,omitempty"`
	// DisabledByDefault: it said "This plugin is disabled by default".
	DisabledByDefault bool `json:"disabledByDefault,omitempty"`
}

// Details is the component inventory of `claude plugin details`. Skills
// holds skills and commands together, as details lists them; Hooks holds
// hook event names.
type Details struct {
	Skills     []string `json:"skills"`
	Agents     []string `json:"agents"`
	Hooks      []string `json:"hooks"`
	MCPServers []string `json:"mcpServers"`
	LSPServers []string `json:"lspServers"`
}

// Marshal writes a golden as indented JSON with a trailing newline, its
// lists sorted, so a re-recording that changed nothing changes no byte.
func (g *Golden) Marshal() ([]byte, error) {
	c := *g
	c.LoadErrors = sorted(c.LoadErrors)
	c.Notes = sorted(c.Notes)
	c.LoadedMCPServers = nonNil(sorted(c.LoadedMCPServers))
	if c.Details != nil {
		d := *c.Details
		d.Skills, d.Agents = nonNil(sorted(d.Skills)), nonNil(sorted(d.Agents))
		d.Hooks, d.MCPServers, d.LSPServers = nonNil(sorted(d.Hooks)), nonNil(sorted(d.MCPServers)), nonNil(sorted(d.LSPServers))
		c.Details = &d
	}
	if c.Session != nil {
		c.Session = &Session{Agents: nonNil(sorted(c.Session.Agents)), Commands: nonNil(sorted(c.Session.Commands))}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("golden %s@%s: %w", g.Plugin, g.Marketplace, err)
	}
	return buf.Bytes(), nil
}

// FileName is the golden's file name in its marketplace's folder.
func FileName(plugin string) string { return plugin + ".json" }

// ReadGoldens reads every golden of one marketplace folder, by plugin name.
func ReadGoldens(dir string) (map[string]*Golden, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read goldens: %w", err)
	}
	out := map[string]*Golden{}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		var g Golden
		if err := readStrict(p, &g); err != nil {
			return nil, fmt.Errorf("read golden: %w", err)
		}
		if FileName(g.Plugin) != e.Name() {
			return nil, fmt.Errorf("golden %s: holds plugin %q, so it should be named %s", p, g.Plugin, FileName(g.Plugin))
		}
		out[g.Plugin] = &g
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read goldens: %s holds none: %w", dir, fs.ErrNotExist)
	}
	return out, nil
}

// WriteGoldens writes goldens into dir, one file each, and removes the
// goldens there of plugins that are not entries of the marketplace any more
// (entries), so the folder never keeps a recording of a vanished entry. A
// golden of an entry this run did not try is left as it was. A folder left
// without goldens is removed: the tests read every folder as a marketplace.
func WriteGoldens(dir string, goldens []*Golden, entries []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write goldens: %w", err)
	}
	written := map[string]bool{}
	for _, g := range goldens {
		data, err := g.Marshal()
		if err != nil {
			return err
		}
		name := FileName(g.Plugin)
		if written[name] {
			return fmt.Errorf("write goldens: plugin %q twice", g.Plugin)
		}
		written[name] = true
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write golden: %w", err)
		}
	}
	isEntry := map[string]bool{}
	for _, e := range entries {
		isEntry[FileName(e)] = true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("write goldens: %w", err)
	}
	kept := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || isEntry[e.Name()] {
			kept++
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("write goldens: %w", err)
		}
	}
	if kept == 0 {
		if err := os.Remove(dir); err != nil {
			return fmt.Errorf("write goldens: %w", err)
		}
	}
	return nil
}

// readStrict decodes the JSON file at path into v; an unknown field, or
// anything after the document, is an error naming the file.
func readStrict(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if dec.More() {
		return fmt.Errorf("%s: more than one JSON document", path)
	}
	return nil
}

func sorted(s []string) []string {
	if s == nil {
		return nil
	}
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
