package main

import (
	"errors"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) updateCommand() *cobra.Command {
	var ap installer.Approval
	var offline bool
	cmd := &cobra.Command{
		Use:   "update NAME (--dry-run | --yes)",
		Short: "Re-plan an installed plugin from its recorded source, and with --yes apply it",
		Long: `Update re-plans NAME from the source recorded when it was installed.

A source pinned to a commit (every plugin installed from a marketplace is) keeps that commit:
re-plan the marketplace to move it. A branch-tracking source (git:github.com/OWNER/REPO,
https://github.com/OWNER/REPO, .../tree/BRANCH/PATH) moves to the branch's head, and the plan
shows the old and the new commit. An unchanged branch costs one conditional request.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ap.DryRun && ap.Yes {
				return usageError(errors.New("--dry-run and --yes exclude each other"))
			}
			if !ap.DryRun && !ap.Yes {
				return usageError(installer.ErrNeedsApproval)
			}
			offline = offline || m.Getenv("REASONIX_OFFLINE") == "1"
			return m.respond(cmd.Context(), func(a *app) *installer.Response {
				resp, _ := a.installer.Update(cmd.Context(), args[0], offline, ap)
				return resp
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&ap.DryRun, "dry-run", false, "plan the update without writing files")
	f.BoolVar(&ap.Yes, "yes", false, "apply the update")
	f.BoolVar(&offline, "offline", false, "no network: answer from the cache and store only")
	return cmd
}
