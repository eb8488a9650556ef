package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (m *Main) enableCommand(enable bool) *cobra.Command {
	use, short := "disable NAME", "Disable a plugin without uninstalling it"
	if enable {
		use, short = "enable NAME", "Enable an installed plugin"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
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
			fmt.Fprintf(m.Stdout, "%s is %s\n", safeText(e.Name), state)
			return nil
		},
	}
}
