package main

import (
	"errors"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) removeCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "remove NAME --yes",
		Aliases: []string{"uninstall"},
		Short:   "Uninstall a plugin (its copied files are deleted; a linked folder stays)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				return usageError(errors.New("remove writes state and deletes the plugin's copied files: rerun with --yes"))
			}
			return m.respond(cmd.Context(), func(a *app) *installer.Response {
				resp, _ := a.installer.Remove(cmd.Context(), args[0])
				return resp
			})
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the removal")
	return cmd
}
