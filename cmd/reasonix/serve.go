package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"reasonix.io/plugind"
	"reasonix.io/plugind/app"
	"reasonix.io/plugind/lockfile"
	"reasonix.io/plugind/server"
)

func (m *Main) serveCommand() *cobra.Command {
	var addr, projectDir string
	var allowRemote bool
	var grace, checkUpdates time.Duration
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7878]",
		Short: "Serve the backend to Studio over HTTP (loopback, bearer token)",
		Example: `  reasonix serve
  reasonix serve --addr 127.0.0.1:0
  curl -H "Authorization: Bearer $(cat ~/.reasonix/serve.token)" http://127.0.0.1:7878/plugins`,
		Long: `Serve the install backend over HTTP for the Studio desktop app (SPEC §12), and the
installer page at http://ADDR/.

It listens on loopback only unless --allow-remote is given. Every JSON route needs
Authorization: Bearer <token>, where the token is the contents of serve.token in the Reasonix
home (created with mode 0600 on first start), or a browser session: ` + "`reasonix studio`" + ` opens
the page signed in with a single-use code, without showing the token to the browser. The
address it listens on is written to serve.addr in the home while it runs. Browser sessions live
in memory (12 hours at most, 2 idle): after a restart, sign in again. SIGINT or SIGTERM
stops it gracefully: in-flight requests get --shutdown-timeout to finish; an install still
running after that is discarded whole.

In the background it checks for updates (--check-updates, every 24 hours by default, the first
a few seconds after start; 0 turns it off): the same plan as ` + "`reasonix plugin update --all --dry-run`" + `,
which asks each marketplace and branch with a conditional request, so an unchanged one costs
one 304. It never applies anything: GET /updates, the page's Installed tab and
` + "`reasonix plugin list --outdated`" + ` show what could move, with its capability diff, for review
and approval.
Offline (REASONIX_OFFLINE=1, or no source answering) a check is skipped, and the time of the
last successful one is kept.

When it serves a project (--project DIR, or the .reasonix/plugins.json found from the working
directory up to the repository's root), GET /project and the page say how the home stands
against the project's lock: what is missing, drifted, toggled or not locked yet.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			remote, err := server.CheckAddr(addr, allowRemote)
			if err != nil {
				return usageError(err)
			}
			logger := server.NewLogger(m.Stderr, slog.LevelInfo)
			a, err := m.openWith(cmd.Context(), app.OpenOptions{Log: logger, Daemon: true})
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer a.Close()
			tokenPath := a.Home.TokenPath()
			token, created, err := server.LoadOrCreateToken(tokenPath)
			if err != nil {
				return fail(m.Stderr, err)
			}
			if checkUpdates < 0 {
				return usageError(fmt.Errorf("--check-updates %s: give a positive duration (24h, 30m), or 0 to turn the checks off", checkUpdates))
			}
			if grace <= 0 {
				grace = -1 // cancel in-flight work at once
			}
			proj, err := servedProject(projectDir)
			if err != nil {
				return fail(m.Stderr, err)
			}
			srv, err := server.New(server.Config{
				Installer: a.Installer, Token: token, Log: logger,
				AllowRemote: allowRemote, ShutdownTimeout: grace,
				CheckUpdates: checkUpdates, Offline: a.Offline, Project: proj,
			})
			if err != nil {
				return fail(m.Stderr, err)
			}
			ln, err := net.Listen("tcp", addr)
			if errors.Is(err, syscall.EADDRINUSE) {
				return fail(m.Stderr, fmt.Errorf("%s is busy (another reasonix serve, or another program, listens there): pick another port, or --addr 127.0.0.1:0 for any free one (serve.addr then says which)", addr))
			}
			if err != nil {
				return fail(m.Stderr, err)
			}
			if remote {
				fmt.Fprintf(m.Stderr, "warning: listening on %s, beyond loopback: anyone who can reach it and holds the token can install code on this machine\n", ln.Addr())
			}
			said := tokenPath
			if created {
				said = "created " + tokenPath + " (mode 0600)"
			}
			fmt.Fprintf(m.Stdout, "token: %s; send it as Authorization: Bearer <token>\n", said)
			// serve.addr tells `reasonix studio` where this daemon listens
			// (the port may have been picked by the system). It goes once
			// the daemon stops, unless another daemon has replaced it.
			addrPath := a.Home.AddrPath()
			bound := ln.Addr().String()
			if err := server.WriteAddrFile(addrPath, bound); err != nil {
				ln.Close()
				return fail(m.Stderr, err)
			}
			defer func() {
				if err := server.RemoveAddrFile(addrPath, bound); err != nil {
					fmt.Fprintf(m.Stderr, "reasonix: warning: %s\n", safeText(err.Error()))
				}
			}()
			fmt.Fprintf(m.Stdout, "reasonix serve: listening on http://%s (home %s)\n", ln.Addr(), a.Home.Dir)
			fmt.Fprintf(m.Stdout, "page: run `reasonix studio` to open http://%s/ signed in\n", ln.Addr())
			if err := srv.Serve(cmd.Context(), ln); err != nil {
				return fail(m.Stderr, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", server.DefaultAddr, "address to listen on (loopback unless --allow-remote)")
	f.BoolVar(&allowRemote, "allow-remote", false, "allow listening on a non-loopback address (prints a warning)")
	f.StringVar(&projectDir, "project", "", "the project whose lock state the page shows (default: the one found from the working directory, if any)")
	f.DurationVar(&checkUpdates, "check-updates", server.DefaultCheckUpdates, "how often to check for updates in the background (never applied; 0: never)")
	f.DurationVar(&grace, "shutdown-timeout", server.DefaultShutdownTimeout, "on SIGINT/SIGTERM, how long in-flight requests may run before they are cancelled")
	return cmd
}

// servedProject is the project serve shows: the one at dir (--project),
// or the one found from the working directory, or none.
func servedProject(dir string) (*lockfile.Project, error) {
	if dir != "" {
		return lockfile.FindProject(dir)
	}
	p, err := lockfile.FindProject(".")
	if plugind.CodeOf(err) == plugind.CodeNotFound {
		return nil, nil // no project here: the daemon serves the home alone
	}
	return p, err
}
