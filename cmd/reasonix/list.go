package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) listCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List installed plugins",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := query(cmd.Context(), m, asJSON, func(a *app) (pluginList, error) {
				infos, err := a.installer.List(cmd.Context())
				return pluginList{infos}, err
			}, func(w io.Writer, l pluginList) { printList(w, l.Plugins) })
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// pluginList is the JSON of `list --json` and GET /plugins.
type pluginList struct {
	Plugins []installer.PluginInfo `json:"plugins"`
}

func printList(w io.Writer, infos []installer.PluginInfo) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "No plugins installed.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSTATE\tKIND\tCAPABILITIES\tSOURCE")
	for _, p := range infos {
		state := "enabled"
		if !p.Enabled {
			state = "disabled"
		}
		if len(p.Problems) > 0 {
			state = "excluded"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", safeText(p.Name), dash(safeCell(p.Version, 24)), state,
			safeText(p.ManifestKind), counts(p), safeText(p.Source))
	}
	tw.Flush()
	for _, p := range infos {
		for _, prob := range p.Problems {
			fmt.Fprintf(w, "warning: %s is excluded from loading: %s (run `reasonix plugin doctor %s`)\n", safeText(p.Name), safeText(prob), safeText(p.Name))
		}
	}
}

func counts(p installer.PluginInfo) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(len(p.Skills), "skills")
	add(len(p.Commands), "commands")
	add(len(p.Agents), "agents")
	add(len(p.Hooks), "hooks")
	add(len(p.MCPServers), "mcp")
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
