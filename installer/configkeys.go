package installer

import (
	"maps"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
)

// How a request's config keys (KEY, NAME.KEY) reach the options of a plan's
// plugins, and which of them a stored plan may keep.

// splitConfigKey reads a request's config key: KEY, or NAME.KEY for one
// plugin of a plan (option keys are identifiers, so the last dot splits).
func splitConfigKey(k string) (plugin, key string) {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[:i], k[i+1:]
	}
	return "", k
}

// CheckConfigKeys refuses config keys that cannot name an option, before
// anything is planned: KEY must be an identifier (Claude's rule: it
// becomes CLAUDE_PLUGIN_OPTION_<KEY>), NAME a plugin name.
func CheckConfigKeys(config map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(config)) {
		plugin, key := splitConfigKey(k)
		if !manifest.IsOptionKey(key) {
			return plugind.Errorf(plugind.CodeConfigInvalid, "--config %s: %q is not an option key (letters, digits and _, not starting with a digit); write KEY=VALUE, or NAME.KEY=VALUE for one plugin of a marketplace", k, key)
		}
		if k != key {
			if err := plugind.ValidateName(plugin); err != nil {
				return plugind.Errorf(plugind.CodeConfigInvalid, "--config %s: %v", k, err)
			}
		}
	}
	return nil
}

// checkConfigUse refuses a plan whose request gives a value that lands on
// no option: NAME.KEY for a plugin the plan does not have, or that does
// not declare KEY; a bare KEY no plugin of the plan declares, or that
// several do (a value meant for one plugin must not reach another: say
// NAME.KEY).
func checkConfigUse(req Request, actions []Action) error {
	if len(req.Config) == 0 {
		return nil
	}
	byName, names := map[string]*Action{}, make([]string, len(actions))
	for i := range actions {
		byName[actions[i].Name], names[i] = &actions[i], actions[i].Name
	}
	for _, k := range slices.Sorted(maps.Keys(req.Config)) {
		plugin, key := splitConfigKey(k)
		if plugin != "" {
			a, ok := byName[plugin]
			switch {
			case !ok:
				return plugind.Errorf(plugind.CodeConfigInvalid, "--config %s: this plan has no plugin %q (it plans %s)", k, plugin, strings.Join(names, ", "))
			case a.config == nil:
				return plugind.Errorf(plugind.CodeConfigInvalid, "--config %s: %s is %s in this plan (%v), so it takes no values", k, plugin, a.Status, a.ErrorText())
			case !declares(a, key):
				return plugind.Errorf(plugind.CodeConfigInvalid, "--config %s: %s declares no option %q%s", k, plugin, key, knownKeys(a))
			}
			continue
		}
		var takers []string
		for i := range actions {
			if declares(&actions[i], key) {
				takers = append(takers, actions[i].Name)
			}
		}
		switch {
		case len(takers) == 0 && len(actions) == 1:
			return plugind.Errorf(plugind.CodeConfigInvalid, "--config %s: %s declares no option %q%s", k, actions[0].Name, key, knownKeys(&actions[0]))
		case len(takers) == 0:
			return plugind.Errorf(plugind.CodeConfigInvalid, "--config %s: no plugin of this plan declares an option %q", k, key)
		case len(takers) > 1:
			return plugind.Errorf(plugind.CodeConfigInvalid, "--config %s: %s all declare option %q; say which plugin it is for: --config NAME.%s=<value>", k, strings.Join(takers, ", "), key, key)
		}
	}
	return nil
}

func declares(a *Action, key string) bool {
	return slices.ContainsFunc(a.UserConfig, func(o ConfigOption) bool { return o.Key == key })
}

func knownKeys(a *Action) string {
	if len(a.UserConfig) == 0 {
		return " (it declares no userConfig options)"
	}
	keys := make([]string, len(a.UserConfig))
	for i, o := range a.UserConfig {
		keys[i] = o.Key
	}
	return "; its options: " + strings.Join(keys, ", ")
}

// StoredConfig is the part of req.Config a stored plan may keep, and an
// approve command may print: values for options every plugin they reach
// declares non-sensitive. Sensitive values, and anything that reached no
// option, never leave memory; to install a stored plan whose values
// included sensitive ones, the client sends them again.
func StoredConfig(req Request, actions []Action) map[string]string {
	out := map[string]string{}
	for k, text := range req.Config {
		plugin, key := splitConfigKey(k)
		reached, sensitive := 0, false
		for i := range actions {
			if plugin != "" && actions[i].Name != plugin {
				continue
			}
			for _, o := range actions[i].UserConfig {
				if o.Key == key {
					reached++
					sensitive = sensitive || o.Sensitive
				}
			}
		}
		if reached > 0 && !sensitive {
			out[k] = text
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
