package main

import (
	"cmp"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/lockfile"
)

func (m *Main) lockCommand() *cobra.Command {
	var out string
	var update bool
	var req installer.Request
	cmd := &cobra.Command{
		Use:   "lock [-o FILE] | lock --update [NAME…]",
		Short: "Write the lock of this home, or re-resolve this project's lock",
		Long: `Lock writes reasonix.lock.json (SPEC §16): each known marketplace with its source and commit,
each installed plugin with its marketplace, source, commit, folder, content digest, enabled
state and non-sensitive option values. Another machine runs "reasonix sync FILE" to end up with
the same plugins at the same commits. Linked and local plugins, and local marketplaces, name
folders on this machine and are left out, each with a warning. -o - writes it to stdout.

--update works on a project: the .reasonix/plugins.json found in this folder or above it, up to
the repository's root. It reads each of the project's marketplaces at its branch head (or the
ref the file names), plans each wanted plugin through it as an install would, and writes the
project's lock (reasonix.lock.json beside the .reasonix folder) with the new pins. Each plugin
that moves is shown as an update's review shows it: what it moves from and its capability diff.
NAME… moves only those plugins; the others keep their locked pins. Nothing is installed: "reasonix
sync" does that, with its own approval.`,
		Example: `  reasonix lock -o team.lock.json
  reasonix lock -o - | less
  reasonix lock --update
  reasonix lock --update fmt lint`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if update {
				return m.lockUpdate(cmd, out, args, req)
			}
			if len(args) > 0 {
				return usageError(errors.New("plugin names go with --update (lock writes every plugin of the home)"))
			}
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
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "file to write (default "+lockfile.FileName+"; with --update the project's lock)")
	f.BoolVar(&update, "update", false, "re-resolve the project's .reasonix/plugins.json to new pins")
	f.BoolVar(&req.Offline, "offline", false, "with --update: no network, from the cache and store only")
	f.BoolVar(&req.Refresh, "refresh", false, "with --update: ask again about what was remembered as not found or refused")
	return cmd
}

// lockUpdate is lock --update: the project's lock re-resolved, its moves
// shown as an update's review, then written.
func (m *Main) lockUpdate(cmd *cobra.Command, out string, names []string, req installer.Request) error {
	if out == "-" {
		return usageError(errors.New("lock --update writes the project's lock (or -o FILE), not stdout: its review is on stdout"))
	}
	req.Offline = req.Offline || m.Getenv("REASONIX_OFFLINE") == "1"
	return m.respond(cmd.Context(), shown{cmd: cmdLock, offline: req.Offline}, func(a *backend) *installer.Response {
		proj, err := lockfile.FindProject(".")
		if err != nil {
			return installer.ErrorResponse(lockfile.ProjectFile, err)
		}
		path := cmp.Or(out, proj.LockPath())
		old, err := lockfile.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			old, err = nil, nil // none yet: every plugin is added
		}
		if err != nil {
			return installer.ErrorResponse(path, err)
		}
		lock, resp, err := a.Installer.LockProject(cmd.Context(), proj, old, names, req)
		if err == nil {
			err = lock.WriteFile(path)
		}
		if err != nil {
			if resp == nil {
				resp = installer.ErrorResponse(path, err)
			}
			resp.OK, resp.Status, resp.Err = false, installer.StatusFailed, err
			return resp
		}
		resp.Source = path // the result line names what was written
		return resp
	})
}

func (m *Main) syncCommand() *cobra.Command {
	var p planning
	var sr installer.SyncRequest
	cmd := &cobra.Command{
		Use:   "sync [FILE] (--dry-run | --yes) [--plan-id ID] [--prune] [--frozen] [--offline]",
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
cache and store alone, with no network at all.

Without FILE, sync works on a project: the .reasonix/plugins.json found in this folder or above
it, up to the repository's root, and its lock beside the .reasonix folder. A plugin the project
wants that its lock does not pin yet is left to "reasonix lock --update" (--frozen refuses).`,
		Example: `  reasonix sync reasonix.lock.json --dry-run
  reasonix sync reasonix.lock.json --yes --plan-id medium:sha256:…
  reasonix sync team.lock.json --yes --prune --frozen
  reasonix sync --frozen --yes`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkApproval(p.ap); err != nil {
				return err
			}
			if len(args) == 0 {
				proj, err := lockfile.FindProject(".")
				if err != nil {
					return m.respond(cmd.Context(), shown{cmd: cmdSync}, func(*backend) *installer.Response {
						return installer.ErrorResponse(lockfile.ProjectFile, err)
					})
				}
				return p.run(cmd, args, m, func(a *backend, r installer.Request, ap installer.Approval) (*installer.Response, error) {
					return a.Installer.SyncProject(cmd.Context(), proj, sr, r, ap)
				})
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
