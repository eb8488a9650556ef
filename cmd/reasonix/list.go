package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/resolver/host"
)

func (m *Main) listCommand() *cobra.Command {
	var available, outdated bool
	var market string
	cmd := &cobra.Command{
		Use:   "list [--available [--marketplace M] | --outdated]",
		Short: "List installed plugins, what the known marketplaces offer, or what could be updated",
		Long: `List the installed plugins.

--available lists what the known marketplaces offer, as last read.

--outdated lists what the daemon's last update check (reasonix serve --check-updates) found could
move: each plugin's installed commit and the one it could move to, its version change and any
risk raise, with the time of the last successful check and the plugins that could not be
checked. It asks no network: it reads the check stored in the cache, the same one GET /updates
and the page show. It exits 1 when that check is not a full answer (none has run, the last one
was skipped offline or failed, or some plugins could not be checked). Nothing is applied:
reasonix plugin update --all --dry-run shows each move's capability diff for approval.`,
		Aliases: []string{"ls"},
		Example: `  reasonix plugin list
  reasonix plugin ls --json
  reasonix plugin list --available --marketplace acme
  reasonix plugin list --outdated`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if market != "" && !available {
				return usageError(fmt.Errorf("--marketplace goes with --available"))
			}
			if outdated && available {
				return usageError(fmt.Errorf("give --available or --outdated, not both"))
			}
			if outdated {
				var check *installer.UpdateCheck
				err := query(cmd.Context(), m, func(a *backend) (*installer.UpdateCheck, error) {
					c, err := a.Installer.LastUpdateCheck(cmd.Context())
					check = c
					return c, err
				}, func(w io.Writer, c *installer.UpdateCheck) {
					printOutdated(w, m.Stderr, m.consoleFor(w).width, c, time.Now())
				})
				if err == nil && !check.Current() {
					return errFailed
				}
				return err
			}
			if available {
				return query(cmd.Context(), m, func(a *backend) (availableList, error) {
					list, err := a.Installer.Available(cmd.Context(), market)
					return availableList{list}, err
				}, func(w io.Writer, l availableList) { printAvailable(w, m.consoleFor(w).width, l.Plugins) })
			}
			return query(cmd.Context(), m, func(a *backend) (pluginList, error) {
				infos, err := a.Installer.List(cmd.Context())
				return pluginList{infos}, err
			}, func(w io.Writer, l pluginList) { printList(w, m.Stderr, m.consoleFor(w).width, l.Plugins) })
		},
	}
	cmd.Flags().BoolVar(&available, "available", false, "list what the known marketplaces offer, as last read (reasonix marketplace update reads them again)")
	cmd.Flags().StringVar(&market, "marketplace", "", "with --available: one known marketplace")
	cmd.Flags().BoolVar(&outdated, "outdated", false, "list what the last update check found could move (no network; see reasonix serve --check-updates)")
	_ = cmd.RegisterFlagCompletionFunc("marketplace", m.completeMarketplaces)
	return cmd
}

// availableList is the JSON of `list --available --json`.
type availableList struct {
	Plugins []installer.Available `json:"plugins"`
}

func printAvailable(w io.Writer, width int, list []installer.Available) {
	if len(list) == 0 {
		fmt.Fprintln(w, "The known marketplaces offer nothing (add one with: reasonix marketplace add SOURCE).")
		return
	}
	t := &table{header: []string{"NAME", "MARKETPLACE", "STATE", "COMMIT", "DESCRIPTION"}, shrink: []int{4, 1, 0}, drop: []int{3}}
	for _, a := range list {
		state := a.Status
		switch {
		case a.InstalledAs != "":
			state = "installed as " + safeText(a.InstalledAs) + ", renamed: update available"
		case a.UpdateAvailable:
			state = "update available"
		case a.Installed:
			state = "installed"
		case a.Status == "ready":
			state = "available"
		}
		t.add(safeText(a.Name), safeText(a.Marketplace), state, dash(host.Short(a.Commit)), safeLine(a.Description, 60))
	}
	t.write(w, width)
}

// displayed is a plugin's name as Claude Code shows it: the name its
// manifest shows (displayName), when it has another, then the name
// commands take: "Nice De (de)". The page writes it the same way.
func displayed(name, display string) string {
	if display == "" || display == name {
		return name
	}
	return display + " (" + name + ")"
}

// pluginList is the JSON of `list --json` and GET /plugins.
type pluginList struct {
	Plugins []installer.PluginInfo `json:"plugins"`
}

// printList prints the installed plugins as a table on w (fitted to
// width columns, 0: unbounded), and what is wrong with them on errw
// (stderr): the table stays parseable.
func printList(w, errw io.Writer, width int, infos []installer.PluginInfo) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "No plugins installed.")
		return
	}
	t := &table{header: []string{"NAME", "VERSION", "STATE", "COMMIT", "CAPABILITIES", "DEPENDENCIES", "SOURCE"}, shrink: []int{6, 4, 5, 0}, drop: []int{6, 3, 1}}
	for _, p := range infos {
		state := "enabled"
		if !p.Enabled {
			state = "disabled"
		}
		if len(p.Problems) > 0 {
			state = "excluded"
		}
		t.add(safeText(displayed(p.Name, p.DisplayName)), dash(safeCell(p.Version, 24)), state, dash(host.Short(p.Commit)), contributes(p.Inventory),
			dependencyCell(p), safeText(fullSHA.ReplaceAllStringFunc(p.Source.String(), host.Short)))
	}
	t.write(w, width)
	for _, p := range infos {
		for _, prob := range p.Problems {
			fmt.Fprintf(errw, "warning: %s is excluded from loading: %s (run `reasonix plugin doctor %s`)\n", safeText(p.Name), safeText(prob), safeText(p.Name))
		}
	}
}

// dependencyCell says whom a plugin needs and who needs it: "needs notes",
// "for hello-claude".
func dependencyCell(p installer.PluginInfo) string {
	parts := slices.DeleteFunc([]string{prefixed("needs ", strings.Join(p.Dependencies, ", ")), prefixed("for ", strings.Join(p.NeededBy, ", "))},
		func(p string) bool { return p == "" })
	return dash(safeText(strings.Join(parts, "; ")))
}

// fullSHA finds the 40-hex commits a recorded source spells out, which the
// table shortens (show and --json keep them whole).
var fullSHA = lazyregexp.New(`\b[0-9a-f]{40}\b`)

func dash(s string) string { return cmp.Or(s, "-") }
