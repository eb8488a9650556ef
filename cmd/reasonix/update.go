package main

import (
	"errors"
	"slices"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
)

func (m *Main) updateCommand() *cobra.Command {
	var p planning
	var ur installer.UpdateRequest
	cmd := &cobra.Command{
		Use:   "update NAME… | --all [--marketplace M] (--dry-run | --yes)",
		Short: "Plan, and with --yes apply, updates of installed plugins",
		Long: `Update moves installed plugins to what their sources name now, in one plan with one planId.

A plugin that came from a marketplace follows it: the marketplace is read again at its branch
head (one conditional request when it has not moved; --offline reads its cached document), and
the plugin moves to its entry's current pin — the entry's new sha, or the marketplace's new
commit for a plugin that lives in the marketplace itself. Never to an unpinned head: an entry
that lost its pin, or vanished, keeps the installed copy, with a warning. Any other plugin
follows its recorded source: a commit stays, a branch moves to its head.

Every move shows where it moves from and what it changes — skills, commands, agents, hooks, MCP
servers, runtime, credential references — and one that adds a hook, an MCP server, a runtime or
a credential reference is riskier than what is installed. A move to another host, owner,
repository or subfolder is its own line, and raises the risk by one more level: approving it
trusts someone else's code. --yes --plan-id ID applies exactly the plan that was shown.

Update keeps each plugin's userConfig values. --config KEY=VALUE (NAME.KEY=VALUE with several
plugins) changes one, even of a plugin whose source has not moved; an option a new version makes
required is asked for on a terminal, as install does, or blocks the plugin
(install.config_required).`,
		Example: `  reasonix plugin update hello --dry-run
  reasonix plugin update --all --dry-run
  reasonix plugin update --all --marketplace acme --yes --plan-id medium:sha256:…
  reasonix plugin update hello --config port=9090 --yes`,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			// Any number of installed plugins, each once.
			return m.completeInstalled(func(e installer.Entry) bool { return !slices.Contains(args, e.Name) })(cmd, nil, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkApproval(p.ap); err != nil {
				return err
			}
			switch {
			case ur.All && len(args) > 0:
				return usageError(errors.New("name plugins or give --all, not both"))
			case !ur.All && len(args) == 0:
				return usageError(errors.New("name the plugins to update, or give --all"))
			case ur.Marketplace != "" && !ur.All:
				return usageError(errors.New("--marketplace goes with --all"))
			}
			ur.Names = args
			return p.run(cmd, args, m, func(a *backend, r installer.Request, ap installer.Approval) (*installer.Response, error) {
				return a.Installer.Update(cmd.Context(), ur, r, ap)
			})
		},
	}
	f := cmd.Flags()
	p.approvalFlags(cmd, "update")
	f.BoolVar(&ur.All, "all", false, "update every installed plugin")
	f.StringVar(&ur.Marketplace, "marketplace", "", "with --all: only the plugins of this known marketplace")
	_ = cmd.RegisterFlagCompletionFunc("marketplace", m.completeMarketplaces)
	f.BoolVar(&p.req.Offline, "offline", false, "no network: answer from the cache and store only")
	f.BoolVar(&p.req.AllowUnpinned, "allow-unpinned", false, "move plugins whose marketplace entry lost its pin to the ref's current head")
	f.BoolVar(&p.req.Refresh, "refresh", false, "ask again about what was remembered as not found or refused")
	f.StringArrayVar(&p.configFlags, "config", nil, configFlagUsage)
	return cmd
}
