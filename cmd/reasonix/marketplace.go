package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// marketplaceCommand is `reasonix marketplace …`: the known marketplaces of
// SPEC §7.
func (m *Main) marketplaceCommand() *cobra.Command {
	root := group(&cobra.Command{
		Use:   "marketplace",
		Short: "Add, list, update and remove known marketplaces",
		Long: `Known marketplaces are the ones plugins are installed from by name (reasonix plugin install
NAME@MARKET) and that update follows. Installing from a marketplace source makes it known too.`,
		Example: `  reasonix marketplace add https://github.com/anthropics/claude-plugins-official
  reasonix marketplace list
  reasonix marketplace update`,
	})
	var offline bool
	add := &cobra.Command{
		Use:   "add SOURCE",
		Short: "Read a marketplace and remember it under the name its document gives",
		Example: `  reasonix marketplace add https://github.com/anthropics/claude-plugins-official
  reasonix marketplace add https://git.example.com/team/market.git
  reasonix marketplace add ./my-marketplace`,
		Args: exactArgs(1, "a SOURCE: a marketplace repository (https://github.com/OWNER/REPO, any git URL) or a local folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return mutate(cmd.Context(), m, "nothing added", func(a *backend) (*installer.MarketplaceUpdate, error) {
				src, err := source.FromText(args[0])
				if err != nil {
					return nil, err
				}
				return a.Installer.AddMarketplace(cmd.Context(), src, offline || m.Getenv("REASONIX_OFFLINE") == "1")
			}, func(con *console, up *installer.MarketplaceUpdate) error {
				con.warnings(up.Warnings)
				con.ok("known marketplace %s: %s at %s, %s", safeText(up.Name), safeText(up.Source.String()), commitOrLocal(up.Commit), plural(up.Entries, "entry"))
				return nil
			})
		},
	}
	add.Flags().BoolVar(&offline, "offline", false, "no network: read it from the cache")
	list := &cobra.Command{
		Use: "list", Short: "List the known marketplaces", Args: cobra.NoArgs,
		Aliases: []string{"ls"},
		Example: "  reasonix marketplace list\n  reasonix marketplace ls --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			return query(cmd.Context(), m, func(a *backend) (marketList, error) {
				ms, err := a.Installer.Marketplaces(cmd.Context())
				return marketList{ms}, err
			}, func(w io.Writer, l marketList) { printMarkets(w, m.consoleFor(w).width, l.Marketplaces, time.Now()) })
		},
	}
	update := &cobra.Command{
		Use:   "update [NAME]",
		Short: "Read the known marketplaces (or one) again at their branch heads",
		Long:  "An unchanged branch costs one conditional request; --offline reads the cached documents.",
		Example: `  reasonix marketplace update
  reasonix marketplace update acme
  reasonix marketplace update --offline`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: m.completeMarketplaces,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return mutate(cmd.Context(), m, "nothing read", func(a *backend) (marketUpdates, error) {
				ups, err := a.Installer.UpdateMarketplaces(cmd.Context(), name, offline || m.Getenv("REASONIX_OFFLINE") == "1")
				return marketUpdates{ups}, err
			}, func(con *console, l marketUpdates) error {
				var moved, same, unchecked []string
				for _, up := range l.Updated {
					state := "unchanged"
					switch {
					case up.Unchecked != "":
						state = fmt.Sprintf("could not check (%s): %s as cached", safeText(up.Unchecked), commitOrLocal(up.Commit))
						unchecked = append(unchecked, safeText(up.Name))
					case up.Changed:
						state = fmt.Sprintf("%s → %s", commitOrLocal(up.Previous), commitOrLocal(up.Commit))
						moved = append(moved, safeText(up.Name))
					default:
						same = append(same, safeText(up.Name))
					}
					if !m.asJSON {
						fmt.Fprintf(m.Stdout, "%s: %s (%s)\n", safeText(up.Name), state, plural(up.Entries, "entry"))
					}
				}
				for _, up := range l.Updated {
					con.warnings(up.Warnings)
				}
				line := fmt.Sprintf("read %s: %d moved, %d unchanged", plural(len(l.Updated), "marketplace"), len(moved), len(same))
				if len(l.Updated) == 0 {
					line = "no known marketplaces to read (add one with: reasonix marketplace add SOURCE)"
				}
				if len(unchecked) > 0 {
					con.result(con.warn(fmt.Sprintf("could not check %s (network): showing what was cached", strings.Join(unchecked, ", "))) + "; " + line)
					return errFailed
				}
				con.ok("%s", line)
				return nil
			})
		},
	}
	update.Flags().BoolVar(&offline, "offline", false, "no network: read the cached documents")
	var force bool
	remove := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Forget a known marketplace",
		Long: `Forget a known marketplace. Refused while installed plugins came from it, unless --force, which
keeps them installed, unlinked from it.`,
		Example: `  reasonix marketplace remove acme
  reasonix marketplace rm acme --force`,
		Args:              exactArgs(1, "the name of a known marketplace (reasonix marketplace list shows them)"),
		ValidArgsFunction: m.completeMarketplaces,
		RunE: func(cmd *cobra.Command, args []string) error {
			return mutate(cmd.Context(), m, "nothing removed", func(a *backend) (marketRemoval, error) {
				k, users, err := a.Installer.RemoveMarketplace(cmd.Context(), args[0], force)
				if err != nil {
					return marketRemoval{}, err
				}
				return marketRemoval{Removed: *k, Unlinked: users}, nil
			}, func(con *console, r marketRemoval) error {
				if len(r.Unlinked) > 0 {
					con.line("still installed, no longer linked to it: %s", safeText(strings.Join(r.Unlinked, ", ")))
				}
				con.ok("removed marketplace %s (%s)", safeText(r.Removed.Name), safeText(r.Removed.Source.String()))
				return nil
			})
		},
	}
	remove.Flags().BoolVar(&force, "force", false, "remove it even though installed plugins came from it (they stay installed)")
	root.AddCommand(add, list, update, remove)
	return root
}

type marketList struct {
	Marketplaces []installer.KnownMarketplace `json:"marketplaces"`
}

type marketUpdates struct {
	Updated []installer.MarketplaceUpdate `json:"marketplaces"`
}

type marketRemoval struct {
	Removed  installer.KnownMarketplace `json:"removed"`
	Unlinked []string                   `json:"unlinked"`
}

func printMarkets(w io.Writer, width int, ms []installer.KnownMarketplace, now time.Time) {
	if len(ms) == 0 {
		fmt.Fprintln(w, "No known marketplaces. Add one with: reasonix marketplace add SOURCE")
		return
	}
	t := &table{header: []string{"NAME", "COMMIT", "READ", "SOURCE"}, shrink: []int{3, 0}}
	for _, k := range ms {
		t.add(safeText(k.Name), commitOrLocal(k.Commit), ago(now, k.ReadAt), safeText(k.Source.String()))
	}
	t.write(w, width)
}

func commitOrLocal(sha string) string { return cmp.Or(host.Short(sha), "(local)") }

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}
