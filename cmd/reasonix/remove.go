package main

import (
	"errors"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) removeCommand() *cobra.Command {
	var yes, force bool
	cmd := &cobra.Command{
		Use:     "remove NAME --yes [--force]",
		Aliases: []string{"uninstall", "rm"},
		Short:   "Uninstall a plugin (its copied files are deleted; a linked folder stays)",
		Long: `Remove uninstalls a plugin: its registry entry goes first, then its copied files. A linked
plugin's folder is yours and stays. Nothing outside the home's plugins folder is ever deleted: a
registry entry edited to point elsewhere goes, and the folder it names stays, with a warning.

A plugin that another installed plugin needs (a dependency) is refused, naming who needs it,
unless --force; those plugins then stay installed without it. Dependencies nothing needs any
more are removed by "reasonix plugin prune".`,
		Example: `  reasonix plugin remove hello --yes
  reasonix plugin remove shared-utils --yes --force`,
		Args:              exactArgs(1, "the name of an installed plugin (reasonix plugin list shows them)"),
		ValidArgsFunction: m.completeInstalled(nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				return usageError(errors.New("remove writes state and deletes the plugin's copied files: rerun with --yes"))
			}
			return m.respond(cmd.Context(), shown{cmd: cmdRemove}, func(a *backend) *installer.Response {
				resp, _ := a.Installer.Remove(cmd.Context(), args[0], force)
				return resp
			})
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "confirm the removal")
	cmd.Flags().BoolVar(&force, "force", false, "remove it even though installed plugins need it")
	return cmd
}

func (m *Main) pruneCommand() *cobra.Command {
	var yes, dryRun bool
	cmd := &cobra.Command{
		Use:   "prune (--dry-run | --yes)",
		Short: "Remove dependencies that no installed plugin needs any more",
		Long: `Prune removes the plugins that were installed only because other plugins needed them, once no
installed plugin does (a dependency that only such a plugin needed goes too). A plugin you
installed yourself is never pruned. --dry-run lists them and writes nothing.`,
		Example: `  reasonix plugin prune --dry-run
  reasonix plugin prune --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dryRun == yes {
				return usageError(errors.New("give --dry-run to see what would go, or --yes to remove it"))
			}
			return m.respond(cmd.Context(), shown{cmd: cmdPrune}, func(a *backend) *installer.Response {
				resp, _ := a.Installer.Prune(cmd.Context(), dryRun)
				return resp
			})
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "remove them")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list them without removing anything")
	return cmd
}
