package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/secrets"
)

// APIVersion is the one apiVersion a native manifest may declare.
const APIVersion = "reasonix.io/plugin/v2"

type nativeHook struct {
	Command      string            `json:"command"`
	Args         *[]string         `json:"args"` // present, even empty, selects exec form
	Shell        string            `json:"shell"`
	ShellCommand bool              `json:"shellCommand"`
	Description  string            `json:"description"`
	ContextFile  string            `json:"contextFile"`
	Matcher      string            `json:"matcher"`
	Timeout      float64           `json:"timeout"`
	Env          map[string]string `json:"env"`
	Async        bool              `json:"async"`
}

type nativeResources struct {
	Skills     []string                `json:"skills"`
	Agents     []string                `json:"agents"`
	Commands   []string                `json:"commands"`
	Prompts    []string                `json:"prompts"`
	Themes     []string                `json:"themes"`
	Hooks      map[string][]nativeHook `json:"hooks"`
	MCPServers map[string]mcpSpec      `json:"mcpServers"`
}

type nativeTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	ReadOnly    bool            `json:"readOnly"`
}

type nativeRuntime struct {
	Command      string            `json:"command"`
	Args         []string          `json:"args"`
	Env          map[string]string `json:"env"`
	Required     bool              `json:"required"`
	Priority     float64           `json:"priority"`
	Intercepts   []string          `json:"intercepts"`
	Replaces     []string          `json:"replaces"`
	Capabilities []string          `json:"capabilities"`
	Tools        []nativeTool      `json:"tools"`
}

type nativeManifest struct {
	APIVersion  string          `json:"apiVersion"`
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Description string          `json:"description"`
	Contributes nativeResources `json:"contributes"`
	Runtime     *nativeRuntime  `json:"runtime"`
	nativeResources
}

var (
	runtimeCapabilities = map[string]bool{"interceptors": true, "strategies": true, "providers": true, "ui": true, "tools": true, "session": true}
	replaceSlots        = map[string]bool{"system_prompt": true, "context": true, "provider_request": true, "provider_response": true, "compaction": true, "session_policy": true, "permission": true, "frontend_events": true}
	runtimeToolName     = lazyregexp.New(`^[A-Za-z0-9_-]{1,48}$`)
	hookShells          = map[string]bool{"bash": true, "powershell": true, "pwsh": true, "cmd": true, "auto": true}
)

// rootVar is how a native manifest names the installed plugin root.
const rootVar = "${REASONIX_PLUGIN_ROOT}/"

// parseNative reads a reasonix-plugin.json document for the package in
// t. It is strict: the exact v2 apiVersion, no unknown field at any
// depth, every declared path relative and inside root. Only what the
// manifest declares is loaded; no host sidecar is imported.
func (t *tree) parseNative(data []byte, opts LoadOptions) (*Package, error) {
	const src = NativeManifest
	doc, err := parseJSON(src, data)
	if err != nil {
		return nil, err
	}
	if doc.Kind != jsondoc.Object {
		return nil, fmt.Errorf("%s must hold a JSON object, not %s", src, doc.Kind)
	}
	switch v := doc.Get("apiVersion"); {
	case v == nil || v.Kind == jsondoc.Null:
		return nil, fmt.Errorf("%s: apiVersion is missing; it must be exactly %q", src, APIVersion)
	case v.Kind != jsondoc.String || v.Str != APIVersion:
		shown := v.Str
		if v.Kind != jsondoc.String {
			shown = string(v.Compact())
		}
		return nil, fmt.Errorf("%s: apiVersion %q is not supported; it must be exactly %q", src, strings.TrimSpace(shown), APIVersion)
	}
	if err := checkNative(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	var m nativeManifest
	if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &m); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	name, err := chooseName(src, m.Name, opts)
	if err != nil {
		return nil, err
	}
	pkg := &Package{
		Kind: KindReasonix, ManifestPath: src, Name: name, ManifestName: m.Name,
		Version: m.Version, Description: m.Description, Compatibility: CompatFull,
	}
	b := newBuilder(t, pkg)
	if err := b.nativeResources(src, &m); err != nil {
		return nil, err
	}
	if m.Runtime != nil {
		rt, err := b.nativeRuntime(src, m.Runtime)
		if err != nil {
			return nil, err
		}
		pkg.Runtime = rt
	}
	b.conventionalConfigFiles()
	b.finish()
	return pkg, nil
}

// nativePaths checks one declared path list. Escaping paths are errors;
// missing ones are warnings (the package may still be usable).
func (b *builder) nativePaths(src, field string, top, contributes []string) ([][2]string, error) {
	var out [][2]string
	seen := map[string]bool{}
	for _, part := range []struct {
		at   string
		list []string
	}{{field, top}, {"contributes." + field, contributes}} {
		for i, p := range part.list {
			at := fmt.Sprintf("%s[%d]", part.at, i)
			rel, real, err := b.t.resolve(p)
			switch {
			case errors.Is(err, errMissing):
				b.skip("%s: %s %q does not exist; skipped", src, at, p)
				continue
			case err != nil:
				return nil, fmt.Errorf("%s: %s %q: %w", src, at, p, err)
			}
			if !seen[rel] { // identical paths in both places are one
				seen[rel] = true
				out = append(out, [2]string{rel, real})
			}
		}
	}
	return out, nil
}

func (b *builder) nativeResources(src string, m *nativeManifest) error {
	top, con := m.nativeResources, m.Contributes
	for _, r := range []struct {
		field    string
		top, con []string
	}{{"skills", top.Skills, con.Skills}, {"commands", top.Commands, con.Commands},
		{"prompts", top.Prompts, con.Prompts}, {"agents", top.Agents, con.Agents}} {
		list, err := b.nativePaths(src, r.field, r.top, r.con)
		if err != nil {
			return err
		}
		for _, p := range list {
			if r.field == "skills" {
				b.skillRoot(p[0], p[1], src, false)
				continue
			}
			for _, f := range b.mdFiles(p[0], p[1], src, r.field) {
				if r.field == "agents" {
					b.addAgent(f, false)
				} else {
					b.addCommand(f, "", "")
				}
			}
		}
	}
	if err := b.nativeThemes(src, top.Themes, con.Themes); err != nil {
		return err
	}
	hooks, err := mergeKeyed(top.Hooks, con.Hooks, "hooks")
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if err := b.nativeHooks(src, hooks); err != nil {
		return err
	}
	servers, err := mergeKeyed(top.MCPServers, con.MCPServers, "mcpServers")
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	names := slices.Sorted(maps.Keys(servers))
	specs := map[string]mcpSpec{}
	for _, name := range names {
		s := servers[name]
		auto := s.AutoStart == nil || *s.AutoStart
		if err := b.addMCP(name, s, src, auto, specs); err != nil {
			return fmt.Errorf("%s: mcpServers.%s: %w", src, name, err)
		}
	}
	return nil
}

// mergeKeyed joins the top-level and contributes forms of a keyed
// resource: the same key twice must mean the same thing.
func mergeKeyed[V any](top, con map[string]V, field string) (map[string]V, error) {
	out := make(map[string]V, len(top)+len(con))
	maps.Copy(out, top)
	for k, v := range con {
		if prev, ok := out[k]; ok && !reflect.DeepEqual(prev, v) {
			return nil, fmt.Errorf("%s.%s is declared both at the top level and in contributes with different definitions", field, k)
		}
		out[k] = v
	}
	return out, nil
}

func (b *builder) nativeHooks(src string, hooks map[string][]nativeHook) error {
	for _, ev := range slices.Sorted(maps.Keys(hooks)) {
		if !slices.Contains(hookEvents, ev) {
			return fmt.Errorf("%s: hooks.%s: unknown hook event; use one of %s", src, ev, strings.Join(hookEvents, ", "))
		}
	}
	for _, ev := range hookEvents {
		for i, h := range hooks[ev] {
			at := fmt.Sprintf("%s: hooks.%s[%d]", src, ev, i)
			hook := Hook{Event: ev, Matcher: h.Matcher, Description: h.Description, Timeout: h.Timeout,
				Async: h.Async, Env: secrets.MaskValues(h.Env), Source: src}
			switch {
			case h.Command != "" && h.ContextFile != "":
				return fmt.Errorf("%s: declares both command and contextFile; use one", at)
			case h.ContextFile != "":
				rel, real, err := b.t.resolve(h.ContextFile)
				switch {
				case errors.Is(err, errMissing):
					b.warn("%s: contextFile %q does not exist", at, h.ContextFile)
				case err != nil:
					return fmt.Errorf("%s: contextFile %q: %w", at, h.ContextFile, err)
				default:
					// The host reads the file at session start; a directory
					// (".", "context") would fail there, not here.
					if info, err := os.Stat(real); err != nil || !info.Mode().IsRegular() {
						return fmt.Errorf("%s: contextFile %q is not a regular file", at, h.ContextFile)
					}
				}
				hook.ContextFile, hook.Form = rel, HookContext
			case h.Command != "":
				hook.Command, hook.Form = h.Command, HookShell
				if h.Args != nil {
					hook.Form, hook.Args = HookExec, secrets.MaskArgs(*h.Args)
				}
				if h.Shell != "" && !hookShells[h.Shell] {
					return fmt.Errorf("%s: shell %q is not one of bash, powershell, pwsh, cmd, auto", at, h.Shell)
				}
				hook.Shell = h.Shell
				hook.Command = secrets.MaskCommand(hook.Command, hook.Form == HookShell, hook.Shell)
			default:
				return fmt.Errorf("%s: needs a command or a contextFile", at)
			}
			if h.Timeout < 0 {
				return fmt.Errorf("%s: timeout must not be negative", at)
			}
			b.pkg.Hooks = append(b.pkg.Hooks, hook)
		}
	}
	return nil
}

// nativeThemes expands theme.json globs. Matches must be regular files
// inside the root; files other than theme.json are ignored.
func (b *builder) nativeThemes(src string, top, con []string) error {
	seen := map[string]bool{}
	for _, part := range []struct {
		at   string
		list []string
	}{{"themes", top}, {"contributes.themes", con}} {
		for i, pattern := range part.list {
			at := fmt.Sprintf("%s: %s[%d] %q", src, part.at, i, pattern)
			clean, err := plugind.LocalPath(pattern)
			if err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			matches, err := filepath.Glob(filepath.Join(b.t.real, filepath.FromSlash(clean)))
			if err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			if len(matches) == 0 {
				b.skip("%s matches no file; skipped", at)
			}
			for _, abs := range matches {
				r, err := filepath.Rel(b.t.real, abs)
				if err != nil {
					return fmt.Errorf("%s: %w", at, err)
				}
				rel := filepath.ToSlash(r)
				ok, err := b.t.regularFile(rel)
				if err != nil {
					return fmt.Errorf("%s: %s: %w", at, rel, err)
				}
				if !ok {
					return fmt.Errorf("%s: %s is not a regular file", at, rel)
				}
				if path.Base(rel) != "theme.json" || seen[rel] {
					continue
				}
				seen[rel] = true
				b.pkg.Themes = append(b.pkg.Themes, rel)
			}
		}
	}
	return nil
}

func (b *builder) nativeRuntime(src string, r *nativeRuntime) (*Runtime, error) {
	at := src + ": runtime"
	if strings.TrimSpace(r.Command) == "" {
		return nil, fmt.Errorf("%s: command is required", at)
	}
	if rest, ok := strings.CutPrefix(r.Command, rootVar); ok {
		_, _, err := b.t.resolve(rest)
		switch {
		case errors.Is(err, errMissing):
			b.warn("%s: command %q does not exist in the package", at, r.Command)
		case err != nil:
			return nil, fmt.Errorf("%s: command %q: %w", at, r.Command, err)
		}
	}
	if r.Priority != math.Trunc(r.Priority) {
		return nil, fmt.Errorf("%s: priority must be a whole number", at)
	}
	if i := slices.IndexFunc(r.Capabilities, func(c string) bool { return !runtimeCapabilities[c] }); i >= 0 {
		return nil, fmt.Errorf("%s: capabilities[%d] %q is not one of interceptors, strategies, providers, ui, tools, session", at, i, r.Capabilities[i])
	}
	if i := slices.IndexFunc(r.Replaces, func(slot string) bool {
		kind, arg, hasArg := strings.Cut(slot, ":")
		return !replaceSlots[slot] && !(hasArg && arg != "" && (kind == "tool" || kind == "provider"))
	}); i >= 0 {
		return nil, fmt.Errorf("%s: replaces[%d] %q is not a replacement slot", at, i, r.Replaces[i])
	}
	command := secrets.Mask(r.Command)
	rt := &Runtime{
		Command:      command,
		Args:         NonNil(secrets.MaskArgs(r.Args)),
		Env:          secrets.MaskValues(r.Env),
		Required:     r.Required,
		Priority:     int(r.Priority),
		Capabilities: NonNil(r.Capabilities),
		Intercepts:   NonNil(r.Intercepts),
		Replaces:     NonNil(r.Replaces),
		Tools:        []RuntimeTool{},
		FullTrust:    true,
		Warning: fmt.Sprintf("FULL TRUST: this plugin runs %s outside the sandbox with your unfiltered environment. "+
			"It can read the whole session, bypass permissions and operate this machine directly. "+
			"Installing it is the authorization; install only runtimes you trust completely.", command),
	}
	if len(r.Tools) > 0 && !slices.Contains(r.Capabilities, "tools") {
		return nil, fmt.Errorf("%s: tools are declared but capabilities does not include \"tools\"", at)
	}
	names := map[string]bool{}
	for i, tool := range r.Tools {
		tat := fmt.Sprintf("%s.tools[%d]", at, i)
		if !runtimeToolName.MatchString(tool.Name) {
			return nil, fmt.Errorf("%s: name %q must be 1-48 letters, digits, '_' or '-'", tat, tool.Name)
		}
		if names[tool.Name] {
			return nil, fmt.Errorf("%s: tool name %q is used twice", tat, tool.Name)
		}
		names[tool.Name] = true
		var schema struct {
			Type string `json:"type"`
		}
		if len(tool.InputSchema) == 0 || json.Unmarshal(tool.InputSchema, &schema) != nil || schema.Type != "object" {
			return nil, fmt.Errorf("%s: inputSchema must be a JSON schema whose type is \"object\"", tat)
		}
		rt.Tools = append(rt.Tools, RuntimeTool{
			Name:        tool.Name,
			ModelName:   "ext__" + toolID(b.pkg.Name) + "__" + tool.Name,
			Description: tool.Description,
			ReadOnly:    tool.ReadOnly,
		})
	}
	return rt, nil
}

// NonNil is s, or an empty list for nil, so JSON shows [] rather than null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// conventionalConfigFiles records sidecar JSON files that exist even when
// the manifest does not load them: an export must still strip them.
func (b *builder) conventionalConfigFiles() {
	for _, rel := range []string{".mcp.json", "hooks/hooks.json", ".claude/settings.json"} {
		if ok, _ := b.t.regularFile(rel); ok {
			b.configFile(rel)
		}
	}
}
