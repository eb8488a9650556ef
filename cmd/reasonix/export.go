package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"
)

func (m *Main) exportCommand() *cobra.Command {
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "export NAME [-o FILE.zip]",
		Short: "Pack an installed plugin as a zip, credentials replaced by ${VAR} references",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := m.open(cmd.Context())
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer a.Close()
			if out == "" {
				out = args[0] + ".zip"
			}
			abs, err := filepath.Abs(out)
			if err != nil {
				return fail(m.Stderr, err)
			}
			// The zip appears whole or not at all.
			pf, err := renameio.NewPendingFile(abs, renameio.WithPermissions(0o644))
			if err != nil {
				return fail(m.Stderr, fmt.Errorf("create %s: %w", abs, err))
			}
			defer pf.Cleanup()
			info, err := a.installer.Export(cmd.Context(), args[0], pf)
			if err != nil {
				return fail(m.Stderr, err)
			}
			if err := pf.CloseAtomicallyReplace(); err != nil {
				return fail(m.Stderr, fmt.Errorf("write %s: %w", abs, err))
			}
			if asJSON {
				return writeJSON(m.Stdout, map[string]any{"path": abs, "export": info})
			}
			fmt.Fprintf(m.Stdout, "exported %s to %s (%d files)\n", safeText(info.Name), safeText(abs), info.Files)
			for _, f := range info.Stripped {
				fmt.Fprintf(m.Stdout, "credentials stripped from %s\n", safeText(f))
			}
			if len(info.RequiredEnv) > 0 {
				fmt.Fprintf(m.Stdout, "whoever installs it must set: %s\n", safeText("["+strings.Join(info.RequiredEnv, " ")+"]"))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "zip file to write (default NAME.zip)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
