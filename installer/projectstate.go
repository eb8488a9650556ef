package installer

import (
	"slices"

	"reasonix.io/plugind/lockfile"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/secrets"
)

// ProjectState is how this home stands against a project's lock: what
// the page shows when the daemon serves a project. It reads the registry
// and the lock only, never the network.
type ProjectState struct {
	Dir  string `json:"dir"`
	Lock string `json:"lock"` // the lock's path
	// Error says why the project or its lock could not be read (masked);
	// then the lists are empty.
	Error string `json:"error,omitempty"`
	// InSync: every locked plugin is installed as locked, and the project
	// wants nothing the lock does not pin.
	InSync bool `json:"inSync"`
	// Missing are locked plugins not installed; Drifted installed at
	// another commit or content; Toggled in another enabled state; Extra
	// installed but not in the lock (sync --prune removes them); Unlocked
	// wanted by the project but not pinned by its lock (lock --update).
	Missing  []string `json:"missing"`
	Drifted  []Drift  `json:"drifted"`
	Toggled  []string `json:"toggled"`
	Extra    []string `json:"extra"`
	Unlocked []string `json:"unlocked"`
}

// Drift is a plugin installed at another pin than its lock's.
type Drift struct {
	Name      string `json:"name"`
	Locked    string `json:"locked"`    // the locked commit
	Installed string `json:"installed"` // the installed one
}

// ProjectState compares the home with proj's lock.
func (in *Installer) ProjectState(proj *lockfile.Project) ProjectState {
	st := ProjectState{Dir: proj.Dir, Lock: proj.LockPath()}
	fail := func(err error) ProjectState {
		st.Error = secrets.Mask(err.Error())
		return st.listed()
	}
	lock, err := lockfile.ReadFile(st.Lock)
	if err != nil {
		return fail(err)
	}
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return fail(err)
	}
	for _, lp := range lock.Plugins {
		e, ok := reg.Find(lp.Name)
		switch {
		case !ok:
			st.Missing = append(st.Missing, lp.Name)
		case e.Commit != lp.Commit || e.ContentDigest != lp.ContentDigest:
			st.Drifted = append(st.Drifted, Drift{Name: lp.Name, Locked: lp.Commit, Installed: e.Commit})
		case e.Enabled != lp.Enabled:
			st.Toggled = append(st.Toggled, lp.Name)
		}
	}
	for _, e := range reg.Plugins {
		if _, ok := lock.FindPlugin(e.Name); !ok {
			st.Extra = append(st.Extra, e.Name)
		}
	}
	for _, w := range proj.Unlocked(lock) {
		st.Unlocked = append(st.Unlocked, w.String())
	}
	slices.Sort(st.Extra)
	st.InSync = len(st.Missing)+len(st.Drifted)+len(st.Toggled)+len(st.Unlocked) == 0
	return st.listed()
}

// listed writes its empty lists as [].
func (st ProjectState) listed() ProjectState {
	st.Missing, st.Toggled, st.Extra, st.Unlocked = manifest.NonNil(st.Missing), manifest.NonNil(st.Toggled), manifest.NonNil(st.Extra), manifest.NonNil(st.Unlocked)
	st.Drifted = manifest.NonNil(st.Drifted)
	return st
}
