package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) enableCommand(enable bool) *cobra.Command {
	use, short := "disable NAME", "Disable a plugin without uninstalling it"
	example := "  reasonix plugin disable hello-claude\n  reasonix plugin disable hello-claude --json"
	// Completion offers what the command would change: enabled plugins to
	// disable, disabled ones to enable.
	candidates := func(e installer.Entry) bool { return e.Enabled != enable }
	if enable {
		use, short = "enable NAME", "Enable an installed plugin"
		example = "  reasonix plugin enable hello-claude\n  reasonix plugin enable hello-claude --json"
	}
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Example:           example,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: m.completeInstalled(candidates),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := m.open(cmd.Context())
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer a.Close()
			e, err := a.installer.SetEnabled(cmd.Context(), args[0], enable)
			if err != nil {
				return fail(m.Stderr, err)
			}
			state := "disabled"
			if e.Enabled {
				state = "enabled"
			}
			if m.asJSON {
				return writeJSON(m.Stdout, map[string]any{"ok": true, "plugin": e})
			}
			fmt.Fprintf(m.Stdout, "%s is %s\n", safeText(e.Name), state)
			return nil
		},
	}
}
