package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"reasonix.io/plugind"
)

// The checks below hold for every package whatever its manifest says; the
// corpus tests, the synthetic fixtures and the fuzz targets apply them.

// parseErrorInvariants: a refused manifest says why with a code.
func parseErrorInvariants(err error) error {
	switch code := plugind.CodeOf(err); {
	case code != plugind.CodeInvalidSource && code != plugind.CodeSourceUnreadable:
		return fmt.Errorf("parse error coded %q: %v", code, err)
	case strings.TrimSpace(err.Error()) == "":
		return fmt.Errorf("parse error with an empty message")
	}
	return nil
}

// manifestPaths is where each kind's manifest lives.
var manifestPaths = map[Kind]string{KindReasonix: NativeManifest, KindClaude: ClaudeManifest, KindCodex: CodexManifest}

// packageInvariants checks a parsed package against root: what it claims
// matches what it holds, every file it points at is inside root, names are
// usable in invocations, imported MCP servers stay off, and it prints.
func packageInvariants(p *Package, kind Kind, root string) error {
	if p.Kind != kind || p.ManifestPath != manifestPaths[kind] {
		return fmt.Errorf("kind %q at %q, want %q at %q", p.Kind, p.ManifestPath, kind, manifestPaths[kind])
	}
	if err := plugind.ValidateName(p.Name); err != nil {
		return fmt.Errorf("package name: %v", err)
	}
	mapped := len(p.Skills) + len(p.Commands) + len(p.Agents) + len(p.Hooks) + len(p.MCPServers)
	if kind == KindReasonix {
		if p.Compatibility != CompatFull || p.Blocked {
			return fmt.Errorf("native package with compatibility %q, blocked %v", p.Compatibility, p.Blocked)
		}
	} else {
		switch {
		case p.Compatibility != CompatFull && p.Compatibility != CompatPartial && p.Compatibility != CompatNone:
			return fmt.Errorf("compatibility %q", p.Compatibility)
		case p.Blocked != (p.Compatibility == CompatNone):
			return fmt.Errorf("blocked=%v with compatibility %q", p.Blocked, p.Compatibility)
		case p.Blocked && p.BlockReason == "":
			return fmt.Errorf("blocked without a reason")
		case (mapped == 0) != (p.Compatibility == CompatNone):
			return fmt.Errorf("%d items mapped with compatibility %q", mapped, p.Compatibility)
		case p.Compatibility == CompatPartial && len(p.Warnings) == 0:
			return fmt.Errorf("partial without a warning")
		case p.Runtime != nil:
			return fmt.Errorf("a %s package with a runtime", kind)
		}
	}
	pkgRoot, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer pkgRoot.Close()
	items := map[string]bool{}
	item := func(what, name, invocation, rel string, dir bool) error {
		for _, seg := range strings.Split(name, ":") {
			if err := plugind.ValidateName(seg); err != nil {
				return fmt.Errorf("%s %q: %v", what, name, err)
			}
		}
		want := "/" + p.Name + ":" + name
		if what == "agent" {
			want = "/" + p.Name + ":agent:" + name
		}
		if invocation != want {
			return fmt.Errorf("%s %q invoked as %q, want %q", what, name, invocation, want)
		}
		if items[what+" "+name] {
			return fmt.Errorf("two %ss named %q", what, name)
		}
		items[what+" "+name] = true
		return inside(pkgRoot, rel, dir)
	}
	for _, s := range p.Skills {
		if err := item("skill", s.Name, s.Invocation, s.Path, true); err != nil {
			return err
		}
		if err := inside(pkgRoot, s.Path+"/SKILL.md", false); err != nil {
			return err
		}
	}
	for _, c := range p.Commands {
		if err := item("command", c.Name, c.Invocation, c.Path, false); err != nil {
			return err
		}
	}
	for _, a := range p.Agents {
		if err := item("agent", a.Name, a.Invocation, a.Path, false); err != nil {
			return err
		}
	}
	for i, h := range p.Hooks {
		if err := hookInvariants(h, pkgRoot, p.Warnings); err != nil {
			return fmt.Errorf("hooks[%d] %+v: %v", i, h, err)
		}
	}
	servers := map[string]bool{}
	for _, s := range p.MCPServers {
		switch {
		case strings.TrimSpace(s.Name) == "" || servers[s.Name]:
			return fmt.Errorf("MCP server name %q empty or repeated", s.Name)
		case s.Transport == "stdio" && s.Command == "",
			(s.Transport == "http" || s.Transport == "sse") && s.URL == "",
			s.Transport != "stdio" && s.Transport != "http" && s.Transport != "sse":
			return fmt.Errorf("MCP server %q: transport %q with command %q, url %q", s.Name, s.Transport, s.Command, s.URL)
		case kind != KindReasonix && s.AutoStart:
			return fmt.Errorf("imported MCP server %q auto-starts", s.Name)
		case !strings.HasPrefix(s.ToolPrefix, "mcp__plugin_") || !strings.HasSuffix(s.ToolPrefix, "__") || !toolNameSafe(s.ToolPrefix):
			return fmt.Errorf("MCP server %q: tool prefix %q", s.Name, s.ToolPrefix)
		}
		servers[s.Name] = true
	}
	for _, w := range p.Warnings {
		if strings.TrimSpace(w) == "" {
			return fmt.Errorf("an empty warning")
		}
	}
	if _, err := json.Marshal(p); err != nil {
		return fmt.Errorf("the package does not print as JSON: %v", err)
	}
	return nil
}

func hookInvariants(h Hook, pkgRoot *os.Root, warnings []string) error {
	if !slices.Contains(hookEvents, h.Event) {
		return fmt.Errorf("event %q", h.Event)
	}
	switch h.Form {
	case HookContext:
		if h.ContextFile == "" || h.Command != "" || len(h.Args) > 0 {
			return fmt.Errorf("a context hook that runs something")
		}
		// A context file may be missing (the host reads it at session
		// start), but only with a warning and never through a link
		// leading out of the root.
		if _, err := pkgRoot.Lstat(filepath.FromSlash(h.ContextFile)); errors.Is(err, fs.ErrNotExist) {
			if !warned(warnings, fmt.Sprintf("contextFile %q does not exist", h.ContextFile)) {
				return fmt.Errorf("missing context file %q without a warning", h.ContextFile)
			}
			return noOutwardLink(pkgRoot, h.ContextFile)
		}
		return inside(pkgRoot, h.ContextFile, false)
	case HookExec:
		if h.Command == "" {
			return fmt.Errorf("an exec hook without a command")
		}
	case HookShell:
		if h.Command == "" || len(h.Args) > 0 {
			return fmt.Errorf("a shell hook without a command, or with args")
		}
	default:
		return fmt.Errorf("form %q", h.Form)
	}
	return nil
}

// inside checks that rel, a clean relative slash path, names an existing
// file (or directory) reachable from root without leaving it: os.Root
// refuses any path, symlinks included, that escapes.
func inside(root *os.Root, rel string, dir bool) error {
	clean, err := plugind.LocalPath(rel)
	if err != nil || clean != rel {
		return fmt.Errorf("path %q is not a clean local path (%q, %v)", rel, clean, err)
	}
	info, err := root.Stat(filepath.FromSlash(rel))
	if err != nil {
		return fmt.Errorf("path %q is not inside the package root: %v", rel, err)
	}
	if info.IsDir() != dir {
		return fmt.Errorf("path %q: directory=%v, want %v", rel, info.IsDir(), dir)
	}
	return nil
}

func warned(warnings []string, sub string) bool {
	for _, w := range warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// noOutwardLink checks that no existing component of rel is a symlink
// whose target lies outside root (a dangling link can still point out).
func noOutwardLink(root *os.Root, rel string) error {
	cur := ""
	for _, seg := range strings.Split(rel, "/") {
		cur = path.Join(cur, seg)
		info, err := root.Lstat(filepath.FromSlash(cur))
		if err != nil {
			return nil
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := root.Readlink(filepath.FromSlash(cur))
		if err != nil {
			return err
		}
		if filepath.IsAbs(target) {
			return fmt.Errorf("path %q goes through %s, a link to the absolute path %s", rel, cur, target)
		}
		if _, err := plugind.LocalPath(path.Join(path.Dir(cur), filepath.ToSlash(target))); err != nil {
			return fmt.Errorf("path %q goes through %s, a link to %s outside the package root", rel, cur, target)
		}
	}
	return nil
}

// toolNameSafe: an MCP tool name the agent sees uses only these bytes.
func toolNameSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
