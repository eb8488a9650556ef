package installer

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
)

// Sensitive userConfig values live in the home's config/ folder (SPEC §4),
// one file per plugin, mode 0600 in a 0700 folder, and nowhere else: not in
// the registry, a plan, a log, an export or the page. The registry entry
// names its file (Entry.ConfigFile), so the file is published the way a
// plugin's copy is: a fresh file is written before the registry rename
// that names it (config/NAME.json, or config/NAME@<random>.json while the
// old one is still named), the old one is deleted after it, and the
// registry alone decides which is live — a crash leaves at most a file no
// entry names, which the next mutation sweeps.

// secretsFile is the JSON of a config/ file.
type secretsFile struct {
	Version int                       `json:"version"`
	Plugin  string                    `json:"plugin"`
	Values  map[string]manifest.Value `json:"values"`
}

const secretsVersion = 1

// maxSecretsBytes bounds what a config/ file may hold: a few values.
const maxSecretsBytes = 1 << 20

// ConfigDir is where sensitive userConfig values are kept.
func (h Home) ConfigDir() string { return filepath.Join(h.Dir, "config") }

// configFileOf checks the file name an entry records: config/NAME.json or
// config/NAME@<suffix>.json of that plugin, nothing else (the registry is
// a file a person can edit; a name must not lead out of config/).
func configFileOf(e Entry) (string, error) {
	f := e.ConfigFile
	base, suffix, at := strings.Cut(strings.TrimSuffix(f, ".json"), "@")
	if !strings.HasSuffix(f, ".json") || base != e.Name || (at && (suffix == "" || strings.ContainsAny(suffix, `/\.`))) || filepath.Base(f) != f {
		return "", fmt.Errorf("the registry names %q as %s's config file, which is not config/%s.json or config/%s@….json", f, e.Name, e.Name, e.Name)
	}
	return f, nil
}

// readSecrets reads the sensitive values of an installed plugin; none when
// it records no file.
func (in *Installer) readSecrets(e Entry) (map[string]manifest.Value, error) {
	if e.ConfigFile == "" {
		return nil, nil
	}
	name, err := configFileOf(e)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(in.Home.ConfigDir())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", in.Home.ConfigDir(), err)
	}
	defer root.Close()
	f, err := plugind.OpenRegular(root, name)
	if err != nil {
		return nil, fmt.Errorf("config/%s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config/%s: %w", name, err)
	}
	if len(data) > maxSecretsBytes {
		return nil, fmt.Errorf("config/%s is over %d bytes", name, maxSecretsBytes)
	}
	var sf secretsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	// Never quote the decoder's error: it can echo the file's bytes.
	if dec.Decode(&sf) != nil || sf.Version != secretsVersion {
		return nil, fmt.Errorf("config/%s is not a config file of this reasonix (version %d)", name, secretsVersion)
	}
	if sf.Plugin != e.Name {
		return nil, fmt.Errorf("config/%s holds the values of %q, not %q", name, sf.Plugin, e.Name)
	}
	return sf.Values, nil
}

// writeSecrets writes name's sensitive values to a fresh file of config/
// that none of taken names, atomically and private to the user, and
// returns its name.
func (in *Installer) writeSecrets(name string, values map[string]manifest.Value, taken map[string]bool) (string, error) {
	dir := in.Home.ConfigDir()
	if err := plugind.MkdirPrivate(dir); err != nil {
		return "", plugind.Errorf(plugind.CodePublicationFailed, "create %s: %w", dir, err)
	}
	if _, _, err := plugind.Tighten(dir, true); err != nil {
		return "", plugind.Errorf(plugind.CodePublicationFailed, "%s: %w", dir, err)
	}
	file := name + ".json"
	if _, err := os.Lstat(filepath.Join(dir, file)); taken[file] || !errors.Is(err, fs.ErrNotExist) {
		file = name + "@" + rand.Text() + ".json"
	}
	doc := secretsFile{Version: secretsVersion, Plugin: name, Values: values}
	if err := writePrivateJSON(filepath.Join(dir, file), doc, "write config/"+file); err != nil {
		return "", err
	}
	return file, nil
}

// dropSecrets deletes a config/ file an entry no longer names.
func (in *Installer) dropSecrets(file string) {
	if file == "" || filepath.Base(file) != file || file == "." || file == ".." {
		return
	}
	_ = os.Remove(filepath.Join(in.Home.ConfigDir(), file))
}

// sweepSecrets deletes whatever in config/ the registry does not name: the
// file of a plugin since removed, one a crash left before or after the
// registry rename, a writer's temporary file. Like sweepOrphans it runs
// under the home lock, with the registry read under it.
func (in *Installer) sweepSecrets(reg *Registry) {
	dir := in.Home.ConfigDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	live := map[string]bool{}
	for _, e := range reg.Plugins {
		live[e.ConfigFile] = true
	}
	for _, ent := range ents {
		if !live[ent.Name()] {
			in.Log.Debug("sweeping a config file the registry does not name", "file", ent.Name())
			_ = os.RemoveAll(filepath.Join(dir, ent.Name()))
		}
	}
}

// ResolveUserConfig is what the host substitutes for ${user_config.KEY}
// when it launches an MCP server, hook or LSP server of the installed
// plugin name (manifest.ExpandUserConfig; manifest.OptionEnv gives hooks
// their CLAUDE_PLUGIN_OPTION_<KEY> variables): every option's value,
// sensitive ones read from config/, else its default, else "" for an
// optional one. A required option without a value is left out, so its
// placeholder stays. The result holds secrets: it is for launching, never
// for showing.
func (in *Installer) ResolveUserConfig(name string) (map[string]string, error) {
	_, e, err := in.lookup(name)
	if err != nil {
		return nil, err
	}
	if problem := in.rootProblem(*e); problem != "" {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "%s: %s", name, problem)
	}
	pkg, err := manifest.Load(e.Root, e.loadOptions())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	set, err := in.installedValues(*e)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return manifest.OptionTexts(pkg.UserConfig, set, true), nil
}

// installedValues are an installed plugin's option values: the registry's,
// with the sensitive ones of its config/ file over them (none of those
// when it cannot be read: the error says why).
func (in *Installer) installedValues(e Entry) (map[string]manifest.Value, error) {
	set := map[string]manifest.Value{}
	maps.Copy(set, e.Config)
	secrets, err := in.readSecrets(e)
	maps.Copy(set, secrets)
	return set, err
}
