package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor NAME",
		Short: "Check that an installed plugin's root, manifest and content are intact",
		Long: `Doctor checks one installed plugin: its root is its own folder in the home's plugins folder (or,
for a linked plugin, a folder of yours), it exists, its manifest reads, and its files still hash
to the digest that was installed. A root the registry was edited to point elsewhere is reported
and never read. It exits 1 when anything is wrong and says how to repair it.`,
		Example: `  reasonix plugin doctor hello-claude
  reasonix plugin doctor hello-claude --json`,
		Args:              exactArgs(1, "the name of an installed plugin (reasonix plugin list shows them)"),
		ValidArgsFunction: m.completeInstalled(nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			problems := 0
			err := query(cmd.Context(), m, func(a *backend) (*installer.PluginInfo, error) {
				info, err := a.Installer.Show(cmd.Context(), args[0])
				if info != nil {
					problems = len(info.Problems)
				}
				return info, err
			}, printDoctor)
			if err == nil && problems > 0 {
				return errFailed
			}
			return err
		},
	}
}

func (m *Main) capabilitiesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "capabilities",
		Short: "Report skills, hooks, MCP servers and package roots across installed plugins",
		Example: `  reasonix doctor capabilities
  reasonix doctor capabilities --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return query(cmd.Context(), m, func(a *backend) (*installer.CapabilityReport, error) {
				return a.Installer.Capabilities(cmd.Context())
			}, func(w io.Writer, r *installer.CapabilityReport) { printCapabilities(w, m.consoleFor(w).width, r) })
		},
	}
}

func printDoctor(w io.Writer, info *installer.PluginInfo) {
	fmt.Fprintf(w, "%s: root %s\n", safeText(info.Name), safeText(info.Root))
	if len(info.Problems) == 0 {
		fmt.Fprintf(w, "ok: root present, manifest readable, content matches %s\n", safeText(info.ContentDigest))
	}
	labeled(w, "problem", info.Problems)
	labeled(w, "warning", info.Warnings)
}

// printCapabilities prints what the installed plugins contribute, one
// row each under a header, then hooks by event, conflicts and warnings.
func printCapabilities(w io.Writer, width int, r *installer.CapabilityReport) {
	if len(r.Plugins) == 0 {
		fmt.Fprintln(w, "Nothing installed: no skills, commands, agents, hooks, MCP servers or runtimes to report.")
		return
	}
	t := &table{header: []string{"PLUGIN", "STATE", "RUNTIME", "CONTRIBUTES", "ROOT"}, shrink: []int{4, 3, 1, 0}, drop: []int{4}}
	for _, p := range r.Plugins {
		state := "loaded"
		if !p.Loaded {
			state = "not loaded (" + safeText(p.Status) + ")"
			if !p.Enabled {
				state = "disabled"
			}
		}
		runtime := "-"
		if p.Runtime {
			runtime = "FULL TRUST"
		}
		t.add(safeText(p.Name), state, runtime, countWords(p.Skills, p.Commands, p.Agents, p.Hooks, p.MCP, false), safeText(p.Root))
	}
	t.write(w, width)
	for _, event := range slices.Sorted(maps.Keys(r.Hooks)) {
		fmt.Fprintf(w, "hook %s: %d\n", safeText(event), r.Hooks[event])
	}
	labeled(w, "conflict", r.Conflicts)
	labeled(w, "warning", r.Warnings)
}

// labeled prints each item on a line of its own, after its label
// ("warning: …").
func labeled(w io.Writer, label string, items []string) {
	for _, it := range items {
		fmt.Fprintf(w, "%s: %s\n", label, safeText(it))
	}
}
