package installer

import (
	"context"
	"sort"
)

// CapabilityReport is the workspace-wide view of `doctor capabilities`:
// what every enabled, loadable plugin adds, and where they collide.
type CapabilityReport struct {
	Plugins    []PluginCapabilities `json:"plugins"`
	Skills     []string             `json:"skills"`
	Commands   []string             `json:"commands"`
	Agents     []string             `json:"agents"`
	Hooks      map[string]int       `json:"hooks"` // event → number of hooks
	MCPServers []string             `json:"mcpServers"`
	Conflicts  []string             `json:"conflicts"`
	Warnings   []string             `json:"warnings"`
}

// PluginCapabilities is one plugin's line of the report.
type PluginCapabilities struct {
	Name     string   `json:"name"`
	Root     string   `json:"root"`
	Enabled  bool     `json:"enabled"`
	Loaded   bool     `json:"loaded"`
	Status   string   `json:"status"`
	Problems []string `json:"problems"`
	Skills   int      `json:"skills"`
	Commands int      `json:"commands"`
	Agents   int      `json:"agents"`
	Hooks    int      `json:"hooks"`
	MCP      int      `json:"mcpServers"`
	Runtime  bool     `json:"runtime"`
}

// Capabilities builds the report from the registry and the installed roots.
func (in *Installer) Capabilities(ctx context.Context) (*CapabilityReport, error) {
	infos, err := in.List(ctx)
	if err != nil {
		return nil, err
	}
	r := &CapabilityReport{Plugins: []PluginCapabilities{}, Skills: []string{}, Commands: []string{}, Agents: []string{},
		Hooks: map[string]int{}, MCPServers: []string{}, Conflicts: []string{}, Warnings: []string{}}
	owner := map[string]string{}
	claim := func(list *[]string, kind, id, plugin string) {
		*list = append(*list, id)
		key := kind + " " + id
		if prev, ok := owner[key]; ok {
			r.Conflicts = append(r.Conflicts, kind+" "+id+" is provided by both "+prev+" and "+plugin)
			return
		}
		owner[key] = plugin
	}
	for _, p := range infos {
		pc := PluginCapabilities{Name: p.Name, Root: p.Root, Enabled: p.Enabled, Loaded: p.Loaded, Status: p.Status,
			Problems: p.Problems, Skills: len(p.Skills), Commands: len(p.Commands), Agents: len(p.Agents),
			Hooks: len(p.Hooks), MCP: len(p.MCPServers), Runtime: p.Runtime != nil}
		r.Plugins = append(r.Plugins, pc)
		r.Warnings = append(r.Warnings, p.Warnings...)
		if !p.Loaded {
			continue
		}
		for _, s := range p.Skills {
			claim(&r.Skills, "skill", s.Invocation, p.Name)
		}
		for _, c := range p.Commands {
			claim(&r.Commands, "command", c.Invocation, p.Name)
		}
		for _, a := range p.Agents {
			r.Agents = append(r.Agents, a.Invocation)
		}
		for _, h := range p.Hooks {
			r.Hooks[h.Event]++
		}
		for _, m := range p.MCPServers {
			claim(&r.MCPServers, "MCP server", m.ToolPrefix, p.Name)
		}
	}
	for _, list := range [][]string{r.Skills, r.Commands, r.Agents, r.MCPServers} {
		sort.Strings(list)
	}
	return r, nil
}
