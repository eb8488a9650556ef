package main

import (
	"errors"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) installCommand() *cobra.Command {
	var req installer.Request
	var ap installer.Approval
	cmd := &cobra.Command{
		Use:   "install SOURCE (--dry-run | --yes)",
		Short: "Plan, and with --yes apply, the install of a plugin or a marketplace",
		Long: `Install a plugin package from SOURCE: a local folder, a .zip (such as one made by export),
git:github.com/OWNER/REPO, https://github.com/OWNER/REPO, or
https://github.com/OWNER/REPO/tree/REF/PATH. A marketplace installs one action per plugin.

--dry-run prints the plan and writes nothing; --yes plans and applies it. With --plan-id, --yes
installs only if the fresh plan is exactly the one you reviewed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Source = args[0]
			if ap.DryRun && ap.Yes {
				return usageError(errors.New("--dry-run and --yes exclude each other"))
			}
			if ap.PlanID != "" && !ap.Yes {
				return usageError(errors.New("--plan-id goes with --yes"))
			}
			if !ap.DryRun && !ap.Yes {
				return usageError(installer.ErrNeedsApproval)
			}
			req.PlanID = ap.PlanID
			req.Offline = req.Offline || m.Getenv("REASONIX_OFFLINE") == "1"
			return m.respond(cmd.Context(), func(a *app) *installer.Response {
				resp, _ := a.installer.Install(cmd.Context(), req, ap)
				if ap.DryRun && resp != nil && m.stderrIsTerminal() {
					// The same plan, readable, on the terminal; stdout keeps
					// the JSON for scripts.
					writeReview(m.Stderr, resp, approveCommand(args[0], req, resp.PlanID))
				}
				return resp
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&ap.DryRun, "dry-run", false, "plan and validate without writing files")
	f.BoolVar(&ap.Yes, "yes", false, "apply the plan")
	f.StringVar(&ap.PlanID, "plan-id", "", "with --yes: install only if the fresh plan has this planId")
	f.StringVar(&req.Name, "name", "", "override the plugin name (or select one marketplace entry)")
	f.BoolVar(&req.Replace, "replace", false, "allow replacing an installed plugin of the same name")
	f.BoolVar(&req.Link, "link", false, "link a local folder instead of copying it (no content pin)")
	f.BoolVar(&req.Offline, "offline", false, "no network: plan from the cache and store only")
	f.BoolVar(&req.AllowUnpinned, "allow-unpinned", false, "resolve unpinned marketplace url/github entries to their ref's head and pin that")
	return cmd
}
