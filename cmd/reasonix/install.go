package main

import (
	"cmp"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/source"
)

func (m *Main) installCommand() *cobra.Command {
	var p planning
	req := &p.req
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
			if err := checkApproval(p.ap); err != nil {
				return err
			}
			// The source is parsed here, once, as the daemon parses its
			// JSON; a refused one is answered as the installer answers it.
			src, srcErr := source.FromText(args[0])
			req.Source = src
			return p.run(cmd, args, m, func(a *backend, r installer.Request, ap installer.Approval) (*installer.Response, error) {
				if srcErr != nil {
					return installer.ErrorResponse(args[0], srcErr), srcErr
				}
				return a.Installer.Install(cmd.Context(), r, ap)
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&p.ap.DryRun, "dry-run", false, "plan and validate without writing files")
	f.BoolVarP(&p.ap.Yes, "yes", "y", false, "apply the plan")
	f.Var(&p.ap.PlanID, "plan-id", "with --yes: install only if the fresh plan has this planId")
	f.StringVar(&req.Name, "name", "", "override the plugin name (or select one marketplace entry)")
	f.BoolVar(&req.Replace, "replace", false, "allow replacing an installed plugin of the same name")
	f.BoolVar(&req.Link, "link", false, "link a local folder instead of copying it (no content pin)")
	f.BoolVar(&req.Offline, "offline", false, "no network: plan from the cache and store only")
	f.BoolVar(&req.Refresh, "refresh", false, "ask again about what was remembered as not found or refused")
	f.BoolVar(&req.AllowUnpinned, "allow-unpinned", false, "resolve unpinned marketplace url/github entries to their ref's head and pin that")
	f.StringArrayVar(&p.configFlags, "config", nil, configFlagUsage)
	return cmd
}

// planning is what install and update share: the approval, the request
// and the --config values, bound to their flags.
type planning struct {
	ap          installer.Approval
	req         installer.Request
	configFlags []string
}

// approvalFlags are the flags that approve an update-like plan of what
// ("update", "sync"): --dry-run, --yes and --plan-id.
func (p *planning) approvalFlags(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.BoolVar(&p.ap.DryRun, "dry-run", false, "plan the "+what+" without writing files")
	f.BoolVarP(&p.ap.Yes, "yes", "y", false, "apply the "+what)
	f.Var(&p.ap.PlanID, "plan-id", "with --yes: apply only if the fresh plan has this planId")
}

// run makes the plan of cmd (install or update) once its usage is
// checked, and with --yes applies it: --config goes into the request,
// REASONIX_OFFLINE=1 is --offline, and on a terminal a required value the
// plan lacks is asked for (withAnswers). A dry run's review ends with the
// command that approves exactly this plan (approveArgs).
func (p *planning) run(cmd *cobra.Command, args []string, m *Main, plan func(a *backend, r installer.Request, ap installer.Approval) (*installer.Response, error)) error {
	cfg, err := parseConfigFlags(p.configFlags)
	if err != nil {
		return err
	}
	p.req.Config = cfg
	p.req.Offline = p.req.Offline || m.Getenv("REASONIX_OFFLINE") == "1"
	sh := shown{cmd: command(cmd.Name()), offline: p.req.Offline}
	if p.ap.DryRun {
		sh.approve = func(resp *installer.Response) []string {
			return approveArgs(cmp.Or(m.Prog, "reasonix"), cmd, args, configArgs(p.req, resp), resp.PlanID)
		}
	}
	return m.respond(cmd.Context(), sh, func(a *backend) *installer.Response {
		return m.withAnswers(cmd.Context(), &p.req, p.ap, func(r installer.Request, ap installer.Approval) *installer.Response {
			resp, _ := plan(a, r, ap)
			return resp
		})
	})
}

// approveFlags are the flags of each planning command that shape its plan,
// in the order its approve command repeats them.
var approveFlags = map[string][]string{
	"install": {"name", "replace", "link", "offline", "allow-unpinned"},
	"update":  {"all", "marketplace", "offline", "allow-unpinned", "refresh"},
	"sync":    {"prune", "frozen", "offline"},
}

// approveArgs is the command line that applies exactly the plan of cmd
// run with args, as reviewed: the same words, the flags that shaped the
// plan as they stand now (--offline also when REASONIX_OFFLINE asked for
// it), the config flags, then --yes and --plan-id.
func approveArgs(prog string, cmd *cobra.Command, args, config []string, planID string) []string {
	out := append(append([]string{prog}, strings.Fields(cmd.CommandPath())[1:]...), args...)
	for _, name := range approveFlags[cmd.Name()] {
		switch f := cmd.Flags().Lookup(name); {
		case f.Value.Type() == "bool" && f.Value.String() == "true":
			out = append(out, "--"+name)
		case f.Value.Type() == "string" && f.Value.String() != "":
			out = append(out, "--"+name, f.Value.String())
		}
	}
	return append(append(out, config...), "--yes", "--plan-id", planID)
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
