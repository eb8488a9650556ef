package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"
)

func (m *Main) exportCommand() *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "export NAME [-o FILE.zip] [--force]",
		Short: "Pack an installed plugin as a zip, credentials replaced by ${VAR} references",
		Long: `Export packs an installed plugin as a zip that installs on its own (reasonix plugin install
FILE.zip). Literal credentials in its hooks, MCP servers and config files are replaced by ${VAR}
references that keep it working; the output says which variables to set. An existing file is
never overwritten unless --force.`,
		Example: `  reasonix plugin export hello-claude
  reasonix plugin export hello-claude -o /tmp/hello.zip --force`,
		Args:              exactArgs(1, "the name of an installed plugin (reasonix plugin list shows them)"),
		ValidArgsFunction: m.completeInstalled(nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			con := m.consoleFor(m.Stderr)
			a, err := m.open(cmd.Context())
			if err != nil {
				return m.failed(con, "nothing exported", err)
			}
			defer a.Close()
			out = cmp.Or(out, args[0]+".zip")
			abs, err := filepath.Abs(out)
			if err != nil {
				return m.failed(con, "nothing exported", err)
			}
			exists := fmt.Errorf("%s already exists: pass --force to replace it, or -o another file", abs)
			if _, err := os.Lstat(abs); err == nil && !force {
				return m.failed(con, "nothing exported", exists)
			}
			// The zip appears whole or not at all.
			pf, err := renameio.NewPendingFile(abs, renameio.WithPermissions(0o644))
			if err != nil {
				return m.failed(con, "nothing exported", fmt.Errorf("create %s: %w", abs, err))
			}
			defer pf.Cleanup()
			info, err := a.Installer.Export(cmd.Context(), args[0], pf)
			if err != nil {
				return m.failed(con, "nothing exported", err)
			}
			if _, err := os.Lstat(abs); err == nil && !force {
				// It appeared while the zip was written: still not ours.
				return m.failed(con, "nothing exported", exists)
			}
			if err := pf.CloseAtomicallyReplace(); err != nil {
				return m.failed(con, "nothing exported", fmt.Errorf("write %s: %w", abs, err))
			}
			if m.asJSON {
				if err := writeJSON(m.Stdout, map[string]any{"path": abs, "export": info}); err != nil {
					return err
				}
			}
			s := screen{con}
			for _, f := range info.Stripped {
				s.line("credentials stripped from %s", safeText(f))
			}
			if len(info.RequiredEnv) > 0 {
				s.line("whoever installs it must set: %s", safeText(strings.Join(info.RequiredEnv, ", ")))
			}
			con.ok("exported %s to %s (%s)", safeText(info.Name), safeText(abs), plural(info.Files, "file"))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "zip file to write (default NAME.zip)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the file if it exists")
	return cmd
}
