package installer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sweepOrphans deletes every entry of plugins/ that reg does not name as a
// root (SPEC §9, Recovery), and every file of config/ it does not name. A process killed during apply leaves staging
// dirs (.staging-*), half-deleted trash (.trash-*) and, during a --replace,
// a fresh sibling root (plugins/<name>@<digest12>) published just before the
// registry rename that would have named it. None of them is ever adopted:
// the registry alone says what is installed, so everything else under
// plugins/ is a leftover, whatever its name.
//
// It must run under the home lock, with the registry read under that lock,
// so no other process is staging or publishing while it looks. A registered
// root is recognised by path or, when the home is reached through another
// path (a symlinked home), by being the same directory.
func (in *Installer) sweepOrphans(reg *Registry) {
	in.sweepSecrets(reg)
	dir := in.Home.PluginsDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	live := map[string]bool{}
	var liveInfo []os.FileInfo
	for _, e := range reg.Plugins {
		live[filepath.Clean(e.Root)] = true
		if info, err := os.Stat(e.Root); err == nil {
			liveInfo = append(liveInfo, info)
		}
	}
	for _, ent := range ents {
		p := filepath.Join(dir, ent.Name())
		if live[p] || sameAsAny(p, liveInfo) {
			continue
		}
		if strings.HasPrefix(ent.Name(), stagingPrefix) || strings.HasPrefix(ent.Name(), trashPrefix) {
			// Already out of any root's place: delete in place.
			_ = os.RemoveAll(p)
			continue
		}
		in.Log.Debug("sweeping a folder the registry does not name", "path", p)
		_ = in.discard(p)
	}
}

// sameAsAny reports whether p is the same file as one of infos.
func sameAsAny(p string, infos []os.FileInfo) bool {
	if len(infos) == 0 {
		return false
	}
	info, err := os.Lstat(p)
	return err == nil && slices.ContainsFunc(infos, func(li os.FileInfo) bool { return os.SameFile(info, li) })
}

// Sweep takes the home lock and sweeps leftovers: what an approved command
// (--yes) that finds nothing to apply still does, so a home a crashed
// process left untidy converges on the next run.
func (in *Installer) Sweep(ctx context.Context) error {
	reg, unlock, err := lockedState[Registry](ctx, in, in.Home.RegistryPath())
	if err != nil {
		return err
	}
	defer unlock()
	in.sweepOrphans(reg)
	return nil
}
