package parity

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file reads what Claude Code 2.1.x prints: `claude plugin details`
// (text only; it has no --json), `claude plugin list --json` and the
// output of `claude plugin install`.

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// inventoryLine is one "  Skills (2)  a, b  (suffix)" line of details.
var inventoryLine = regexp.MustCompile(`^  (Skills|Agents|Hooks|MCP servers|LSP servers) \((\d+)\)(?:  (.*))?$`)

// detailsSuffixes are what details appends after some lists' names.
var detailsSuffixes = []string{
	"  (harness-only \u2014 no model context cost)",
	"  (tool schemas resolved at runtime; not counted)",
	"  (out-of-process tooling; no model context cost)",
}

// DetailsOutput is what `claude plugin details NAME@MARKET` says.
type DetailsOutput struct {
	// Name is the name Claude loaded the plugin under: its manifest's,
	// which need not be the entry's.
	Name        string
	DisplayName string
	Version     string
	Details     Details
}

// detailsHeader is "DISPLAY (NAME)[ VERSION]"; without a display name the
// header is "NAME[ VERSION]". Plugin names and versions hold no spaces.
var detailsHeader = regexp.MustCompile(`^(.*) \(([^() ]+)\)(?: (\S+))?$`)

// ParseDetails reads the output of `claude plugin details` for plugin (the
// entry's name, for errors). Its header is "NAME[ VERSION]" or
// "DISPLAY (NAME)[ VERSION]"; its "Component inventory" lists names joined
// by ", ". A count that does not match the names read is an error (a name
// holding ", " would do that) rather than a golden that quietly lies.
func ParseDetails(plugin, out string) (*DetailsOutput, error) {
	lines := strings.Split(strings.ReplaceAll(ansiEscape.ReplaceAllString(out, ""), "\r", ""), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("details of %s: empty output", plugin)
	}
	d := &DetailsOutput{}
	head := lines[0]
	if m := detailsHeader.FindStringSubmatch(head); m != nil {
		d.DisplayName, d.Name, d.Version = m[1], m[2], m[3]
	} else {
		d.Name, d.Version, _ = strings.Cut(head, " ")
	}
	if d.Name == "" || strings.Contains(d.Version, " ") {
		return nil, fmt.Errorf("details of %s: header %q is not NAME[ VERSION] or DISPLAY (NAME)[ VERSION]", plugin, head)
	}
	seen := map[string]bool{}
	inInventory := false
	for _, line := range lines[1:] {
		if line == "Component inventory" {
			inInventory = true
			continue
		}
		if !inInventory {
			continue
		}
		if line == "" {
			break
		}
		m := inventoryLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("details of %s: unexpected inventory line %q", plugin, line)
		}
		n, _ := strconv.Atoi(m[2])
		names := splitNames(m[3])
		if len(names) != n {
			return nil, fmt.Errorf("details of %s: %s says %d but lists %d names (%q)", plugin, m[1], n, len(names), m[3])
		}
		seen[m[1]] = true
		switch m[1] {
		case "Skills":
			d.Details.Skills = names
		case "Agents":
			d.Details.Agents = names
		case "Hooks":
			d.Details.Hooks = names
		case "MCP servers":
			d.Details.MCPServers = names
		case "LSP servers":
			d.Details.LSPServers = names
		}
	}
	for _, k := range []string{"Skills", "Agents", "Hooks", "MCP servers", "LSP servers"} {
		if !seen[k] {
			return nil, fmt.Errorf("details of %s: no %s line in its component inventory", plugin, k)
		}
	}
	return d, nil
}

func splitNames(s string) []string {
	for _, suf := range detailsSuffixes {
		s = strings.TrimSuffix(s, suf)
	}
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ", ")
}

// ListEntry is what `claude plugin list --json` says of one plugin.
type ListEntry struct {
	ID         string                     `json:"id"`
	Version    string                     `json:"version"`
	Enabled    bool                       `json:"enabled"`
	Errors     []string                   `json:"errors"`
	Notes      []string                   `json:"notes"`
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
}

// MCPServerNames are the entry's MCP server names, sorted.
func (e ListEntry) MCPServerNames() []string {
	out := make([]string, 0, len(e.MCPServers))
	for k := range e.MCPServers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ParseList reads `claude plugin list --json`, by plugin id (NAME@MARKET).
func ParseList(data []byte) (map[string]ListEntry, error) {
	var list []ListEntry
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("claude plugin list --json: %w", err)
	}
	out := make(map[string]ListEntry, len(list))
	for _, e := range list {
		out[e.ID] = e
	}
	return out, nil
}

// InstallOutput is what `claude plugin install` printed and how it exited.
type InstallOutput struct {
	Exit              int
	Error             string
	DisabledByDefault bool
}

// ParseInstall reads the output of `claude plugin install NAME@MARKET`,
// which exited with exit.
func ParseInstall(plugin string, exit int, out string) InstallOutput {
	text := ansiEscape.ReplaceAllString(out, "")
	res := InstallOutput{Exit: exit, DisabledByDefault: strings.Contains(text, "This plugin is disabled by default")}
	if exit == 0 {
		return res
	}
	msg := text
	if _, after, ok := strings.Cut(text, "Failed to install plugin "); ok {
		msg = after
		// "NAME@MARKET": MESSAGE
		if q := strconv.Quote(plugin); strings.HasPrefix(msg, q[:len(q)-1]) {
			if _, rest, ok := strings.Cut(msg, `": `); ok {
				msg = rest
			}
		}
	}
	res.Error = OneLine(msg)
	return res
}

// OneLine collapses whitespace (a zod error spans many lines) into single
// spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// tempID is the folder Claude clones a plugin into before naming it.
var tempID = regexp.MustCompile(`temp_[a-z]+_[0-9]+_[a-z0-9]+`)

// Placeholders replace run-specific paths in Claude's messages, so a golden
// says the same on every run: each Old (a throwaway folder) becomes New.
type Placeholders []struct{ Old, New string }

// Apply replaces the run's folders, the longest first, and Claude's
// temporary clone names.
func (p Placeholders) Apply(s string) string {
	sorted := append(Placeholders(nil), p...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i].Old) > len(sorted[j].Old) })
	for _, r := range sorted {
		if r.Old != "" {
			s = strings.ReplaceAll(s, r.Old, r.New)
		}
	}
	return tempID.ReplaceAllString(s, "temp_<id>")
}

// harnessFailure matches install failures that say the harness could not
// serve the entry (a pinned commit or an object the fetched snapshot
// lacks, a repository not served), not what Claude makes of the plugin.
var harnessFailure = regexp.MustCompile(`not our ref|unable to read [0-9a-f]{40}|repository corruption|reference is not a tree|` +
	`[Rr]epository not found|repository '[^']*' not found|Could not resolve host|Failed to connect|Connection refused`)

// HarnessFailure reports whether an install failure message is the
// harness's (see harnessFailure): no golden is recorded for it.
func HarnessFailure(msg string) bool { return harnessFailure.MatchString(msg) }
