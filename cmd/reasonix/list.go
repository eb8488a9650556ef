package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
)

func (m *Main) listCommand() *cobra.Command {
	var available bool
	var market string
	cmd := &cobra.Command{
		Use:     "list [--available [--marketplace M]]",
		Short:   "List installed plugins, or what the known marketplaces offer",
		Aliases: []string{"ls"},
		Example: `  reasonix plugin list
  reasonix plugin ls --json
  reasonix plugin list --available --marketplace acme`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if market != "" && !available {
				return usageError(fmt.Errorf("--marketplace goes with --available"))
			}
			if available {
				_, err := query(cmd.Context(), m, m.asJSON, func(a *app) (availableList, error) {
					list, err := a.installer.Available(cmd.Context(), market)
					return availableList{list}, err
				}, func(w io.Writer, l availableList) { printAvailable(w, l.Plugins) })
				return err
			}
			_, err := query(cmd.Context(), m, m.asJSON, func(a *app) (pluginList, error) {
				infos, err := a.installer.List(cmd.Context())
				return pluginList{infos}, err
			}, func(w io.Writer, l pluginList) { printList(w, m.Stderr, l.Plugins) })
			return err
		},
	}
	cmd.Flags().BoolVar(&available, "available", false, "list what the known marketplaces offer (as last read; `reasonix marketplace update` reads them again)")
	cmd.Flags().StringVar(&market, "marketplace", "", "with --available: one known marketplace")
	_ = cmd.RegisterFlagCompletionFunc("marketplace", m.completeMarketplaces)
	return cmd
}

// availableList is the JSON of `list --available --json`.
type availableList struct {
	Plugins []installer.Available `json:"plugins"`
}

func printAvailable(w io.Writer, list []installer.Available) {
	if len(list) == 0 {
		fmt.Fprintln(w, "The known marketplaces offer nothing (add one with: reasonix marketplace add SOURCE).")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME	MARKETPLACE	STATE	COMMIT	DESCRIPTION")
	for _, a := range list {
		state := a.Status
		switch {
		case a.UpdateAvailable:
			state = "update available"
		case a.Installed:
			state = "installed"
		case a.Status == "ready":
			state = "available"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", safeText(a.Name), safeText(a.Marketplace), state, dash(shortCommit(a.Commit)), safeLine(a.Description, 60))
	}
	tw.Flush()
}

// displayed is a plugin's name with the name its manifest shows
// (displayName), when it has another: "de (Nice De)".
func displayed(name, display string) string {
	if display == "" || display == name {
		return name
	}
	return name + " (" + display + ")"
}

// pluginList is the JSON of `list --json` and GET /plugins.
type pluginList struct {
	Plugins []installer.PluginInfo `json:"plugins"`
}

// printList prints the installed plugins as a table on w, and what is
// wrong with them on errw (stderr): the table stays parseable.
func printList(w, errw io.Writer, infos []installer.PluginInfo) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "No plugins installed.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSTATE\tCOMMIT\tCAPABILITIES\tSOURCE")
	for _, p := range infos {
		state := "enabled"
		if !p.Enabled {
			state = "disabled"
		}
		if len(p.Problems) > 0 {
			state = "excluded"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", safeText(displayed(p.Name, p.DisplayName)), dash(safeCell(p.Version, 24)), state,
			dash(shortCommit(p.Commit)), counts(p), safeText(shortSHAs(p.Source)))
	}
	tw.Flush()
	for _, p := range infos {
		for _, prob := range p.Problems {
			fmt.Fprintf(errw, "warning: %s is excluded from loading: %s (run `reasonix plugin doctor %s`)\n", safeText(p.Name), safeText(prob), safeText(p.Name))
		}
	}
}

// fullSHA finds the 40-hex commits a recorded source spells out.
var fullSHA = plugind.LazyRegexp(`\b[0-9a-f]{40}\b`)

// shortSHAs shortens the commits inside a source for a table (show and
// --json keep them whole).
func shortSHAs(src string) string {
	return fullSHA.ReplaceAllStringFunc(src, shortCommit)
}

func counts(p installer.PluginInfo) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, plural(n, what))
		}
	}
	add(len(p.Skills), "skill")
	add(len(p.Commands), "command")
	add(len(p.Agents), "agent")
	add(len(p.Hooks), "hook")
	add(len(p.MCPServers), "MCP server")
	if p.Runtime != nil {
		parts = append(parts, "runtime")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
