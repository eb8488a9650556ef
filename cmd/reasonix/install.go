package main

import (
	"errors"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/source"
)

func (m *Main) installCommand() *cobra.Command {
	var req installer.Request
	var ap installer.Approval
	var configFlags []string
	cmd := &cobra.Command{
		Use:   "install SOURCE (--dry-run | --yes)",
		Short: "Plan, and with --yes apply, the install of a plugin or a marketplace",
		Long: `Install a plugin package from SOURCE: a local folder, a .zip (such as one made by export),
git:github.com/OWNER/REPO, https://github.com/OWNER/REPO,
https://github.com/OWNER/REPO/tree/REF/PATH, any git repository over HTTPS
(https://HOST/PATH.git[#REF]), or NAME@MARKET (an entry of a known marketplace). A marketplace
installs one action per plugin, with the plugins they depend on.

--dry-run prints the plan and writes nothing; --yes plans and applies it. With --plan-id, --yes
installs only if the fresh plan is exactly the one you reviewed. Installing exactly what is
installed already is up to date (exit 0, nothing written); a FULL TRUST runtime in the plan is
named on stderr.

A plugin that declares userConfig options gets their values from --config KEY=VALUE
(NAME.KEY=VALUE picks one plugin of a marketplace); on a terminal, each required value left
out is asked for, a sensitive one without echo. A required option without a value blocks the
plugin (install.config_required). Sensitive values are kept only in the home's config/ folder,
never in the registry, a plan or an export; they are not printed, so give them again when you
approve a reviewed plan (--config on a command line is visible to other local users: prefer
being asked).`,
		Example: `  reasonix plugin install ./my-plugin --dry-run
  reasonix plugin install https://github.com/OWNER/REPO --yes --plan-id medium:sha256:…
  reasonix plugin install https://github.com/anthropics/claude-plugins-official --name NAME -y
  reasonix plugin install NAME@MARKET --config endpoint=https://api.example --dry-run`,
		Args:              exactArgs(1, "a SOURCE to install: a local folder, a .zip, git:github.com/OWNER/REPO, a repository URL, or NAME@MARKET"),
		ValidArgsFunction: m.completeSource,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkApproval(ap); err != nil {
				return err
			}
			cfg, err := parseConfigFlags(configFlags)
			if err != nil {
				return err
			}
			// The source is parsed here, once, as the daemon parses its
			// JSON; a refused one is answered as the installer answers it.
			src, srcErr := source.FromText(args[0])
			req.Source = src
			req.Config = cfg
			req.Offline = req.Offline || m.Getenv("REASONIX_OFFLINE") == "1"
			sh := shown{cmd: cmdInstall, offline: req.Offline}
			if ap.DryRun {
				sh.approve = func(resp *installer.Response) []string {
					return withConfigArgs(approveCommand(m.prog(), args[0], req, resp.PlanID), req, resp)
				}
			}
			return m.respond(cmd.Context(), sh, func(a *backend) *installer.Response {
				if srcErr != nil {
					return installer.ErrorResponse(args[0], srcErr)
				}
				return m.withAnswers(cmd.Context(), &req, ap, func(r installer.Request, ap installer.Approval) *installer.Response {
					resp, _ := a.Installer.Install(cmd.Context(), r, ap)
					return resp
				})
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&ap.DryRun, "dry-run", false, "plan and validate without writing files")
	f.BoolVarP(&ap.Yes, "yes", "y", false, "apply the plan")
	f.Var(&ap.PlanID, "plan-id", "with --yes: install only if the fresh plan has this planId")
	f.StringVar(&req.Name, "name", "", "override the plugin name (or select one marketplace entry)")
	f.BoolVar(&req.Replace, "replace", false, "allow replacing an installed plugin of the same name")
	f.BoolVar(&req.Link, "link", false, "link a local folder instead of copying it (no content pin)")
	f.BoolVar(&req.Offline, "offline", false, "no network: plan from the cache and store only")
	f.BoolVar(&req.Refresh, "refresh", false, "ask again about what was remembered as not found or refused")
	f.BoolVar(&req.AllowUnpinned, "allow-unpinned", false, "resolve unpinned marketplace url/github entries to their ref's head and pin that")
	f.StringArrayVar(&configFlags, "config", nil, configFlagUsage)
	return cmd
}

// checkApproval is the usage check every planning command shares: exactly
// one of --dry-run and --yes, and --plan-id only with --yes (its form was
// checked as the flags were parsed: it is an installer.PlanID).
func checkApproval(ap installer.Approval) error {
	switch {
	case ap.DryRun && ap.Yes:
		return usageError(errors.New("--dry-run and --yes exclude each other"))
	case !ap.PlanID.IsZero() && !ap.Yes:
		return usageError(errors.New("--plan-id goes with --yes"))
	case !ap.DryRun && !ap.Yes:
		return usageError(installer.ErrNeedsApproval)
	}
	return nil
}
