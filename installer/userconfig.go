package installer

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
)

// userConfig values (SPEC §7). A plugin's options come from its manifest
// (manifest.Option); their values from the request (--config, the page's
// form, a terminal prompt), else from the installed copy a replace or an
// update replaces, else from the option's default. As Claude Code does, the
// plugin's own files are never rewritten: the registry keeps the
// non-sensitive values (Entry.Config), a 0600 file under the home's
// config/ the sensitive ones (secrets.go), and ${user_config.KEY} is
// expanded where the plugin is read — in every plan and listing for the
// non-sensitive values, and by the host, when it launches an MCP server,
// hook or LSP server, for all of them (ResolveUserConfig).

// ConfigOption is one userConfig option as a plan or a listing shows it:
// the option, and what is set for it. A sensitive value is never shown,
// only that it is set.
type ConfigOption struct {
	manifest.Option
	Set   bool            `json:"set"`
	Value *manifest.Value `json:"value,omitempty"`
	// Kept marks a value the installed copy had, which this plan keeps.
	Kept bool `json:"kept,omitempty"`
}

// configState is what planning decided about one action's options, kept
// beside the action until it is applied; secrets never leave memory but
// for the config/ file apply writes.
type configState struct {
	values  map[string]manifest.Value // non-sensitive: into the registry
	secrets map[string]manifest.Value // sensitive: into config/
	// changed says the values differ from the installed copy's (or there
	// is none): installing the same content again is then not a no-op.
	changed bool
	// given says the request set at least one of its options.
	given bool
	// old are the installed copy's values, to say what changes.
	old map[string]manifest.Value
	// opts are the plugin's options.
	opts []manifest.Option
}

// configure decides the values of a's options for req, starting from the
// installed entry it replaces (nil for none), and returns the package with
// the non-sensitive values expanded, for the inventory the plan shows. The
// error is the reason a cannot be installed: a value that does not fit
// (install.config_invalid) or a required option with none
// (install.config_required).
func (in *Installer) configure(req Request, single bool, a *Action, pkg *manifest.Package, installed *Entry) (*manifest.Package, error) {
	st := &configState{values: map[string]manifest.Value{}, secrets: map[string]manifest.Value{}, changed: installed == nil}
	a.config = st
	opts := pkg.UserConfig
	if len(opts) == 0 {
		if installed != nil && (len(installed.Config) > 0 || installed.ConfigFile != "") {
			st.changed = true // the values it had go with the options
		}
		return pkg, nil
	}
	set := map[string]manifest.Value{}
	kept := map[string]bool{}
	old := map[string]manifest.Value{}
	if installed != nil {
		var err error
		if old, err = in.installedValues(*installed); err != nil {
			a.Warnings = append(a.Warnings, fmt.Sprintf("the sensitive option values of the installed %s could not be read (%v); give them again", installed.Name, err))
		}
		for k, v := range old {
			// A value the new version's option no longer takes is dropped.
			if o, ok := manifest.FindOption(opts, k); ok && o.Check(v) == nil {
				set[k], kept[k] = v, true
			}
		}
	}
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(req.Config)) {
		plugin, key := splitConfigKey(k)
		if plugin != "" && plugin != a.Name {
			continue
		}
		o, ok := manifest.FindOption(opts, key)
		if !ok {
			continue // named for no option of this plugin: checkConfigUse says so
		}
		st.given = true
		v, err := o.Parse(req.Config[k])
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		set[key], kept[key] = v, false
	}
	st.changed = installed == nil || !maps.EqualFunc(old, set, manifest.Value.Equal)
	st.old, st.opts = old, opts
	for _, o := range opts {
		co := ConfigOption{Option: o}
		if v, ok := set[o.Key]; ok {
			co.Set, co.Kept = true, kept[o.Key]
			if o.Sensitive {
				st.secrets[o.Key] = v
			} else {
				st.values[o.Key] = v
				val := v
				co.Value = &val
			}
		}
		a.UserConfig = append(a.UserConfig, co)
	}
	shown := pkg.WithUserConfig(manifest.OptionTexts(opts, set, false))
	if len(bad) > 0 {
		return shown, plugind.Errorf(plugind.CodeConfigInvalid, "%s: %s", a.Name, strings.Join(bad, "; "))
	}
	return shown, configRequired(a.Name, single, a.UserConfig)
}

// Missing reports whether the option is required and has no value: none
// set, and no default.
func (o ConfigOption) Missing() bool { return o.Required && !o.Set && o.Default == nil }

// addConfig adds to an update's diff what it changes of the plugin's
// option values: each non-sensitive one from and to, a sensitive one only
// by name.
func (d *Diff) addConfig(st *configState) {
	if st == nil || !st.changed {
		return
	}
	for _, o := range st.opts {
		before, had := st.old[o.Key]
		after, has := st.values[o.Key]
		if o.Sensitive {
			after, has = st.secrets[o.Key]
		}
		if had == has && (!has || before.Equal(after)) {
			continue
		}
		line := "sets option " + o.Key
		switch {
		case o.Sensitive && has:
			line = "sets sensitive option " + o.Key + " (value not shown)"
		case o.Sensitive:
			line = "unsets sensitive option " + o.Key
		case !has:
			line = "unsets option " + o.Key
		case had:
			b, _ := before.MarshalJSON()
			a, _ := after.MarshalJSON()
			line += ": " + string(b) + " → " + string(a)
		default:
			a, _ := after.MarshalJSON()
			line += ": " + string(a)
		}
		d.Changed = append(d.Changed, Change{Kind: ChangeConfig, Name: o.Key})
		d.Summary = append(d.Summary, line)
	}
}

// installedConfig is what an installed plugin's options are set to, as a
// listing shows it, and the package with its non-sensitive values expanded.
// A value the registry holds that its option does not take, a sensitive
// file that cannot be read, and a required option with no value are said
// in warnings.
func (in *Installer) installedConfig(e Entry, pkg *manifest.Package, warnings []string) ([]ConfigOption, *manifest.Package, []string) {
	if len(pkg.UserConfig) == 0 {
		return nil, pkg, warnings
	}
	set := maps.Clone(e.Config)
	secrets, err := in.readSecrets(e)
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("%s's sensitive option values cannot be read: %v; what uses them cannot start (install it again with --replace and give them)", e.Name, err))
	}
	var out []ConfigOption
	var missing []string
	for _, o := range pkg.UserConfig {
		co := ConfigOption{Option: o}
		v, ok := set[o.Key]
		if o.Sensitive {
			v, ok = secrets[o.Key]
		}
		if ok && o.Check(v) != nil {
			warnings = append(warnings, fmt.Sprintf("%s: the value recorded for %s does not fit it (%v); it is not used", e.Name, o.Label(), o.Check(v)))
			delete(set, o.Key)
			ok = false
		}
		if ok {
			co.Set = true
			if !o.Sensitive {
				val := v
				co.Value = &val
			}
		} else if co.Missing() {
			missing = append(missing, o.Label())
		}
		out = append(out, co)
	}
	if len(missing) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s needs a value for %s: what uses it cannot start (give it with reasonix plugin update %s --config KEY=<value>)", e.Name, strings.Join(missing, ", "), e.Name))
	}
	return out, pkg.WithUserConfig(manifest.OptionTexts(pkg.UserConfig, set, false)), warnings
}

// configDifference names the options whose values differ between two
// plans of one plugin (never a value).
func configDifference(old, now []ConfigOption) []string {
	byKey := map[string]ConfigOption{}
	for _, o := range old {
		byKey[o.Key] = o
	}
	var out []string
	for _, n := range now {
		o := byKey[n.Key]
		switch {
		case o.Set != n.Set:
			out = append(out, n.Key+map[bool]string{true: " set", false: " not set"}[n.Set])
		case o.Value != nil && n.Value != nil && !o.Value.Equal(*n.Value):
			out = append(out, n.Key)
		}
	}
	if len(out) == 0 {
		out = append(out, "options")
	}
	return out
}

// configRequired is the error of a plan whose options lack required
// values (install.config_required), saying how to give each; nil when
// none lacks one.
func configRequired(name string, single bool, opts []ConfigOption) error {
	var labels, flags []string
	for _, o := range opts {
		if !o.Missing() {
			continue
		}
		k := o.Key
		if !single {
			k = name + "." + k
		}
		labels = append(labels, o.Label())
		flags = append(flags, "--config "+k+"=<value>")
	}
	if len(labels) == 0 {
		return nil
	}
	return plugind.Errorf(plugind.CodeConfigRequired, "%s needs a value for %s (required, no default): give %s (on a terminal you are asked for it)", name, strings.Join(labels, ", "), strings.Join(flags, " "))
}

// configSummary is what an approval covers of a's configuration: each
// non-sensitive value, and which sensitive options are set, never their
// values (the planId is shown; a hash of a short secret gives it away).
func configSummary(a *Action) []string {
	var out []string
	for _, o := range a.UserConfig {
		switch {
		case !o.Set:
		case o.Sensitive:
			out = append(out, o.Key+" set")
		default:
			v, _ := o.Value.MarshalJSON()
			out = append(out, o.Key+"="+string(v))
		}
	}
	return out
}
