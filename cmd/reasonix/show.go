package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/manifest"
)

func (m *Main) showCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show an installed plugin: metadata, root, source and capability inventory",
		Example: `  reasonix plugin show hello-claude
  reasonix plugin show hello-claude --json`,
		Args:              exactArgs(1, "the name of an installed plugin (reasonix plugin list shows them)"),
		ValidArgsFunction: m.completeInstalled(nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			return query(cmd.Context(), m, func(a *backend) (*installer.PluginInfo, error) {
				return a.Installer.Show(cmd.Context(), args[0])
			}, printShow)
		},
	}
}

func printShow(w io.Writer, p *installer.PluginInfo) {
	kv := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-14s %s\n", k+":", safeText(v))
		}
	}
	kv("name", p.Name)
	if p.DisplayName != p.Name {
		kv("display name", p.DisplayName)
	}
	kv("version", p.Version)
	if p.Description != "" {
		fmt.Fprintf(w, "%-14s %s\n", "description:", safeLine(p.Description, maxCell))
	}
	kv("manifest", p.ManifestKind)
	kv("compatibility", p.Compatibility)
	kv("enabled", fmt.Sprint(p.Enabled))
	kv("status", p.Status)
	kv("source", p.Source.String())
	kv("commit", p.Commit)
	kv("root", p.Root)
	kv("digest", p.ContentDigest)
	kv("installed", p.InstalledAt.Format("2006-01-02 15:04:05Z07:00"))
	if p.Link {
		kv("link", "yes (runs from the folder above; no content pin)")
	}
	kv("needs", strings.Join(p.Dependencies, ", "))
	kv("needed by", strings.Join(p.NeededBy, ", "))
	if p.Dependency {
		kv("installed as", "a dependency (plugin prune removes it once nothing needs it)")
	}
	if p.Runtime != nil {
		fmt.Fprintf(w, "\n!! FULL TRUST runtime: %s\n", safeText(strings.Join(append([]string{p.Runtime.Command}, p.Runtime.Args...), " ")))
		if p.Runtime.Warning != "" {
			fmt.Fprintf(w, "   %s\n", safeText(p.Runtime.Warning))
		}
	}
	section(w, "skills", p.Skills, func(s manifest.Skill) string {
		return fmt.Sprintf("%-32s %s", safeText(s.Invocation), safeLine(s.Description, maxCell))
	})
	section(w, "commands", p.Commands, func(c manifest.Command) string {
		return fmt.Sprintf("%-32s %s", safeText(c.Invocation), safeLine(strings.TrimSpace(c.ArgumentHint+" "+c.Description), maxCell))
	})
	section(w, "agents", p.Agents, func(a manifest.Agent) string {
		return fmt.Sprintf("%-32s %s", safeText(a.Invocation), safeLine(a.Description, maxCell))
	})
	section(w, "hooks", p.Hooks, func(h manifest.Hook) string {
		what := strings.Join(append([]string{h.Command}, h.Args...), " ")
		if h.ContextFile != "" {
			what = "context " + h.ContextFile
		}
		return fmt.Sprintf("%-16s %-12s %s", safeText(h.Event), dash(safeCell(h.Matcher, 40)), safeCell(what, maxCell))
	})
	section(w, "mcp servers", p.MCPServers, func(s manifest.MCPServer) string {
		target := cmp.Or(s.URL, strings.Join(append([]string{s.Command}, s.Args...), " "))
		return fmt.Sprintf("%-16s %-6s %s  (tools %s*, autoStart=%v)", safeText(s.Name), safeText(s.Transport), safeCell(target, maxCell),
			safeText(s.ToolPrefix), s.AutoStart)
	})
	section(w, "fetched at run time", p.RuntimeFetches, func(f manifest.RuntimeFetch) string {
		state := "pinned"
		switch {
		case f.Kind == manifest.FetchRemote:
			state = "remote service"
		case !f.Pinned:
			state = "!! unpinned"
		}
		return fmt.Sprintf("%-16s %s", state, safeLine(f.Describe(), 0))
	})
	section(w, "options", p.UserConfig, func(o installer.ConfigOption) string {
		return fmt.Sprintf("%-32s %s", safeCell(optionLabel(o.Option), 60), optionState(o))
	})
	labeled(w, "warning", p.Warnings)
}

// section prints a titled list of items, one row each, when it has any.
func section[T any](w io.Writer, title string, items []T, row func(T) string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s (%d):\n", title, len(items))
	for _, it := range items {
		fmt.Fprintf(w, "  %s\n", row(it))
	}
}
