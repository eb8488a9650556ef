package main

import (
	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) enableCommand(enable bool) *cobra.Command {
	use, short := "disable NAME [--force]", "Disable a plugin without uninstalling it"
	example := "  reasonix plugin disable hello-claude\n  reasonix plugin disable shared-utils --force"
	// Completion offers what the command would change: enabled plugins to
	// disable, disabled ones to enable.
	candidates := func(e installer.Entry) bool { return e.Enabled != enable }
	if enable {
		use, short = "enable NAME", "Enable an installed plugin"
		example = "  reasonix plugin enable hello-claude\n  reasonix plugin enable hello-claude --json"
	}
	var force bool
	cmd := &cobra.Command{
		Use:               use,
		Short:             short,
		Example:           example,
		Args:              exactArgs(1, "the name of an installed plugin (reasonix plugin list shows them)"),
		ValidArgsFunction: m.completeInstalled(candidates),
		RunE: func(cmd *cobra.Command, args []string) error {
			return mutate(cmd.Context(), m, "nothing changed", func(a *backend) (enabled, error) {
				e, warnings, err := a.Installer.SetEnabled(cmd.Context(), args[0], enable, force)
				return enabled{OK: true, Plugin: e, Warnings: warnings}, err
			}, func(con *console, r enabled) error {
				con.warnings(r.Warnings)
				state := "disabled"
				if r.Plugin.Enabled {
					state = "enabled"
				}
				con.ok("%s is %s", safeText(r.Plugin.Name), state)
				return nil
			})
		},
	}
	if !enable {
		cmd.Flags().BoolVar(&force, "force", false, "disable it even though enabled plugins need it")
	}
	return cmd
}

// enabled is the JSON of enable and disable.
type enabled struct {
	OK       bool             `json:"ok"`
	Plugin   *installer.Entry `json:"plugin"`
	Warnings []string         `json:"warnings"`
}
