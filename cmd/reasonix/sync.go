package main

import (
	"cmp"
	"path/filepath"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/lockfile"
)

func (m *Main) lockCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "lock [-o FILE]",
		Short: "Write the lock of this home: every plugin and marketplace, pinned",
		Long: `Lock writes reasonix.lock.json (SPEC §16): each known marketplace with its source and commit,
each installed plugin with its marketplace, source, commit, folder, content digest, enabled
state and non-sensitive option values. Another machine runs "reasonix sync FILE" to end up with
the same plugins at the same commits. Linked and local plugins, and local marketplaces, name
folders on this machine and are left out, each with a warning. -o - writes it to stdout.`,
		Example: `  reasonix lock
  reasonix lock -o team.lock.json
  reasonix lock -o - | less`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			type locked struct {
				Path     string   `json:"path"`
				Plugins  int      `json:"plugins"`
				Markets  int      `json:"marketplaces"`
				Warnings []string `json:"warnings"`
			}
			return mutate(cmd.Context(), m, "no lock written", func(a *backend) (locked, error) {
				lock, warnings, err := a.Installer.LockHomeDocument(cmd.Context())
				if err != nil {
					return locked{}, err
				}
				res := locked{Path: "stdout", Plugins: len(lock.Plugins), Markets: len(lock.Marketplaces), Warnings: warnings}
				if out == "-" {
					data, err := lock.Marshal()
					if err == nil {
						_, err = m.Stdout.Write(data)
					}
					return res, err
				}
				if res.Path, err = filepath.Abs(cmp.Or(out, lockfile.FileName)); err != nil {
					return locked{}, err
				}
				return res, lock.WriteFile(res.Path)
			}, func(con *console, l locked) error {
				con.warnings(l.Warnings)
				con.ok("locked %s and %s to %s", plural(l.Plugins, "plugin"), plural(l.Markets, "marketplace"), safeText(l.Path))
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default "+lockfile.FileName+"; - for stdout)")
	return cmd
}

func (m *Main) syncCommand() *cobra.Command {
	var p planning
	var sr installer.SyncRequest
	cmd := &cobra.Command{
		Use:   "sync FILE (--dry-run | --yes) [--plan-id ID] [--prune] [--frozen] [--offline]",
		Short: "Make this home match a lock, with one plan and one approval",
		Long: `Sync plans this home to match a lock written by "reasonix lock" (SPEC §16), in one plan with one
planId: it installs the locked plugins that are missing, moves the ones installed at another
commit to the locked commit (never to a newer one; each move shows what it moves from and its
capability diff, as an update does), sets enabled states as locked, and keeps option values.
Plugins the lock lacks stay, with a note, unless --prune removes them. The lock's marketplaces
become known ones.

Every plugin is planned again through where the lock says it came from, and its content must
have the locked digest: one that does not is refused (install.digest_mismatch, naming both) and
nothing of it is installed. --frozen (for CI) refuses a lock that leaves anything to resolve (a
plugin without a commit or digest, a marketplace without a commit); --offline plans from the
cache and store alone, with no network at all.`,
		Example: `  reasonix sync reasonix.lock.json --dry-run
  reasonix sync reasonix.lock.json --yes --plan-id medium:sha256:…
  reasonix sync team.lock.json --yes --prune --frozen`,
		Args: exactArgs(1, "the lock file to sync to (reasonix lock writes one)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkApproval(p.ap); err != nil {
				return err
			}
			lock, err := lockfile.ReadFile(args[0])
			if err != nil {
				// Refused before the home is opened: nothing is made in it.
				return m.refused(shown{cmd: cmdSync}, args[0], err)
			}
			sr.Lock = lock
			return p.run(cmd, args, m, func(a *backend, r installer.Request, ap installer.Approval) (*installer.Response, error) {
				return a.Installer.Sync(cmd.Context(), sr, r, ap)
			})
		},
	}
	f := cmd.Flags()
	p.approvalFlags(cmd, "sync")
	f.BoolVar(&sr.Prune, "prune", false, "remove the installed plugins the lock lacks")
	f.BoolVar(&sr.Frozen, "frozen", false, "refuse a lock that does not pin everything (for CI)")
	f.BoolVar(&p.req.Offline, "offline", false, "no network: plan from the cache and store only")
	return cmd
}
