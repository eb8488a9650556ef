package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
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
			return mutate(cmd.Context(), m, "nothing exported", func(a *backend) (exported, error) {
				abs, err := filepath.Abs(cmp.Or(out, args[0]+".zip"))
				if err != nil {
					return exported{}, err
				}
				exists := fmt.Errorf("%s already exists: pass --force to replace it, or -o another file", abs)
				if _, err := os.Lstat(abs); err == nil && !force {
					return exported{}, exists
				}
				// The zip appears whole or not at all.
				pf, err := renameio.NewPendingFile(abs, renameio.WithPermissions(0o644))
				if err != nil {
					return exported{}, fmt.Errorf("create %s: %w", abs, err)
				}
				defer pf.Cleanup()
				info, err := a.Installer.Export(cmd.Context(), args[0], pf)
				if err != nil {
					return exported{}, err
				}
				if _, err := os.Lstat(abs); err == nil && !force {
					// It appeared while the zip was written: still not ours.
					return exported{}, exists
				}
				if err := pf.CloseAtomicallyReplace(); err != nil {
					return exported{}, fmt.Errorf("write %s: %w", abs, err)
				}
				return exported{Export: info, Path: abs}, nil
			}, func(con *console, e exported) error {
				for _, f := range e.Export.Stripped {
					con.line("credentials stripped from %s", safeText(f))
				}
				if len(e.Export.RequiredEnv) > 0 {
					con.line("whoever installs it must set: %s", safeText(strings.Join(e.Export.RequiredEnv, ", ")))
				}
				con.ok("exported %s to %s (%s)", safeText(e.Export.Name), safeText(e.Path), plural(e.Export.Files, "file"))
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "zip file to write (default NAME.zip)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the file if it exists")
	return cmd
}

// exported is the JSON of export.
type exported struct {
	Export *installer.ExportInfo `json:"export"`
	Path   string                `json:"path"`
}
