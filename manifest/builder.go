package manifest

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/secrets"
)

// Read limits: a package is bounded by its copy budget, but nothing here
// should read a whole stray file to learn a description. Every reader of
// these documents — install, validate, the mirror — uses the same bounds,
// so none accepts what another refuses.
const (
	// MaxManifestBytes bounds a manifest or another JSON file of a package.
	MaxManifestBytes = 4 << 20

	maxJSONBytes        = MaxManifestBytes
	maxMarkdownBytes    = 1 << 20
	maxDiscoveredPerDir = 5000
)

// builder accumulates one package's inventory.
type builder struct {
	t   *tree
	pkg *Package
	// skipped counts declared things that did not map; with mapped items
	// it decides full versus partial.
	skipped int
	// blockReason, when set, is why Claude Code would not load the plugin
	// at all: the package is blocked with it.
	blockReason string
	once        map[string]bool // warnings that must be given once
	skills      map[string]string
	cmds        map[string]string
	agents      map[string]string
}

func newBuilder(t *tree, pkg *Package) *builder {
	return &builder{
		t: t, pkg: pkg,
		once: map[string]bool{}, skills: map[string]string{}, cmds: map[string]string{},
		agents: map[string]string{},
	}
}

// warn records a warning. Warnings quote what the package declared
// (commands, URLs, matchers), so credentials in them are masked here.
func (b *builder) warn(format string, args ...any) {
	b.pkg.Warnings = append(b.pkg.Warnings, secrets.Mask(fmt.Sprintf(format, args...)))
}

// skip records a declared thing that was not mapped.
func (b *builder) skip(format string, args ...any) {
	b.skipped++
	b.warn(format, args...)
}

// block records why the package cannot be installed at all; the first
// reason stands.
func (b *builder) block(format string, args ...any) {
	if b.blockReason == "" {
		b.blockReason = secrets.Mask(fmt.Sprintf(format, args...))
	}
}

// skipOnce records a gap that is reported once per key (e.g. per hooks file).
func (b *builder) skipOnce(key, format string, args ...any) {
	if b.once[key] {
		return
	}
	b.once[key] = true
	b.skip(format, args...)
}

func (b *builder) configFile(rel string) {
	if !slices.Contains(b.pkg.configFiles, rel) {
		b.pkg.configFiles = append(b.pkg.configFiles, rel)
	}
}

func (b *builder) mapped() int {
	p := b.pkg
	return len(p.Skills) + len(p.Commands) + len(p.Agents) + len(p.Hooks) + len(p.MCPServers)
}

// itemName checks a skill, command or agent name taken from a file name:
// it becomes part of /<plugin>:<name>, so it follows the plugin-name rules.
func itemName(name string) error {
	for _, seg := range strings.Split(name, ":") {
		if err := plugind.ValidateName(seg); err != nil {
			return err
		}
	}
	return nil
}

// skillRoot maps a skills path: a directory holding SKILL.md is one skill,
// otherwise each child directory holding SKILL.md is. rel is clean and
// already checked; real is its resolved location. byFrontMatter names a
// path that is a skill by its SKILL.md's name, as Claude Code does (the
// skills of a folder of skills keep their folders' names).
func (b *builder) skillRoot(rel, real, declaredIn string, byFrontMatter bool) {
	if info, err := b.t.stat(real); err == nil && info.Mode().IsRegular() {
		if path.Base(rel) != "SKILL.md" || rel == "SKILL.md" {
			b.skip("%s: skills path %s is a file, not a skill directory; skipped", declaredIn, rel)
			return
		}
		b.addSkill(path.Base(path.Dir(rel)), path.Dir(rel), nil)
		return
	}
	if ok, _ := b.t.regularFile(path.Join(rel, "SKILL.md")); ok {
		name := path.Base(rel)
		if rel == "." {
			name = b.pkg.Name
		}
		fm := b.frontMatter(path.Join(rel, "SKILL.md"))
		if byFrontMatter {
			name = b.skillName(rel, name, fm)
		}
		b.addSkill(name, rel, fm)
		return
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		b.skip("%s: cannot read skills directory %s: %v", declaredIn, rel, err)
		return
	}
	found := 0
	for _, e := range entries {
		child := path.Join(rel, e.Name())
		if _, _, err := b.t.resolve(child); errors.Is(err, ErrOutside) {
			b.skip("%s: %s leaves the package root; skipped", rel, child)
			continue
		}
		if !b.t.isDir(child) {
			continue
		}
		if ok, _ := b.t.regularFile(path.Join(child, "SKILL.md")); !ok {
			continue
		}
		if found++; found > maxDiscoveredPerDir {
			b.skip("%s: more than %d skills; the rest are skipped", rel, maxDiscoveredPerDir)
			return
		}
		b.addSkill(e.Name(), child, nil)
	}
	if found == 0 && declaredIn != "" {
		b.skip("%s: skills path %s holds no SKILL.md; nothing mapped", declaredIn, rel)
	}
}

// skillName is the name dir/SKILL.md's front matter (fm) gives, or folder
// when it gives none; a name that cannot be a skill's is said and the
// folder's kept.
func (b *builder) skillName(dir, folder string, fm *frontMatter) string {
	name, ok := fm.fields["name"].(string)
	name = strings.TrimSpace(name)
	if !ok || name == "" || name == folder {
		return folder
	}
	if err := itemName(name); err != nil {
		b.warn("%s: the name %q in its SKILL.md cannot name a skill (%v); named %q after its folder", dir, name, err, folder)
		return folder
	}
	return name
}

// addSkill adds the skill in dir; fm is its SKILL.md's front matter, nil
// when not read yet.
func (b *builder) addSkill(name, dir string, fm *frontMatter) {
	if !b.claim("skill", b.skills, name, name, dir) {
		return
	}
	if fm == nil {
		fm = b.frontMatter(path.Join(dir, "SKILL.md"))
	}
	b.pkg.Skills = append(b.pkg.Skills, Skill{
		Name:         name,
		Invocation:   "/" + b.pkg.Name + ":" + name,
		Description:  fm.str("description"),
		Path:         dir,
		AllowedTools: fm.tools("allowed-tools", "allowedTools", "allowed_tools"),
	})
}

// frontMatter reads a markdown file's header; problems become warnings.
func (b *builder) frontMatter(rel string) *frontMatter {
	data, err := b.t.readFile(rel, maxMarkdownBytes)
	if err != nil {
		b.warn("%s: cannot read front matter: %v", rel, err)
		fm, _ := parseFrontMatter(nil)
		return fm
	}
	fm, problem := parseFrontMatter(data)
	if problem != "" {
		b.warn("%s: %s", rel, problem)
	}
	return fm
}

// mdFiles lists the .md files a commands or agents path names: the file
// itself, or the .md files in the folder and the folders below it (but
// hidden ones), as Claude Code loads both.
func (b *builder) mdFiles(rel, real, declaredIn, what string) []mdFile {
	info, err := b.t.stat(real)
	if err != nil {
		b.skip("%s: cannot read %s path %s: %v", declaredIn, what, rel, err)
		return nil
	}
	if !info.IsDir() {
		if !strings.HasSuffix(strings.ToLower(rel), ".md") {
			b.skip("%s: %s path %s is not a .md file; skipped", declaredIn, what, rel)
			return nil
		}
		return []mdFile{{base: strings.TrimSuffix(path.Base(rel), path.Ext(rel)), rel: rel}}
	}
	var out []mdFile
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != real && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.EqualFold(filepath.Ext(d.Name()), ".md") {
			return nil
		}
		sub, err := filepath.Rel(real, p)
		if err != nil {
			return err
		}
		sub = filepath.ToSlash(sub)
		fileRel := path.Join(rel, sub)
		if d.Type()&fs.ModeSymlink != 0 {
			if ok, err := b.t.regularFile(fileRel); !ok || err != nil {
				b.skip("%s: %s is a symlink that does not stay inside the package; skipped", what, fileRel)
				return nil
			}
		}
		if len(out) >= maxDiscoveredPerDir {
			return errTooMany
		}
		f := mdFile{base: strings.TrimSuffix(path.Base(sub), path.Ext(sub)), rel: fileRel}
		if dir := path.Dir(sub); dir != "." {
			f.dirs = strings.ReplaceAll(dir, "/", ":") + ":"
		}
		out = append(out, f)
		return nil
	})
	if errors.Is(err, errTooMany) {
		b.skip("%s: more than %d %s files; the rest are skipped", rel, maxDiscoveredPerDir, what)
	} else if err != nil {
		b.skip("%s: cannot read %s directory %s: %v", declaredIn, what, rel, err)
	}
	if len(out) == 0 && declaredIn != "" && err == nil {
		b.skip("%s: %s path %s holds no .md files; nothing mapped", declaredIn, what, rel)
	}
	return out
}

var errTooMany = errors.New("too many files")

// mdFile is a command or agent file: rel its path in the package, base its
// file name without the extension, dirs the folders between the declared
// folder and the file, each followed by ':' ("sub:deeper:"), as Claude Code
// prefixes the names of nested commands and agents.
type mdFile struct{ dirs, base, rel string }

// name is the file's name as a path: a nested file's folders, then its own.
func (f mdFile) name() string { return f.dirs + f.base }

// claim records name as the skill, command or agent (what) at, and
// reports whether it may be added: a name another file has taken, or one
// whose part from paths (checked) cannot follow "/<plugin>:", is skipped
// and said.
func (b *builder) claim(what string, taken map[string]string, name, checked, at string) bool {
	if err := itemName(checked); err != nil {
		b.skip("%s at %s skipped: %v", what, at, err)
		return false
	}
	if prev, dup := taken[name]; dup {
		if prev != at {
			b.skip("%s %q at %s duplicates the one at %s; skipped", what, name, at, prev)
		}
		return false
	}
	taken[name] = at
	return true
}

func (b *builder) addCommand(f mdFile, descOverride, hintOverride string) {
	name := f.name()
	if !b.claim("command", b.cmds, name, name, f.rel) {
		return
	}
	fm := b.frontMatter(f.rel)
	b.pkg.Commands = append(b.pkg.Commands, Command{
		Name:         name,
		Invocation:   "/" + b.pkg.Name + ":" + name,
		Description:  cmp.Or(descOverride, fm.str("description")),
		ArgumentHint: cmp.Or(hintOverride, fm.str("argument-hint")),
		Path:         f.rel,
	})
}

// addAgent adds the agent in f. byFrontMatter names it as a Claude Code
// session does: its folders, then its front matter's name, or its file's
// name when that is empty ("sub:custom" for agents/sub/foo.md saying
// "name: custom"). The front matter's name is the author's text, taken as
// Claude takes it (spaces and all; display escapes it); only the part
// from paths follows the plugin-name rules.
func (b *builder) addAgent(f mdFile, byFrontMatter bool) {
	fm := b.frontMatter(f.rel)
	name := f.name()
	if own := fm.str("name"); byFrontMatter && own != "" {
		name = f.dirs + own
	}
	if !b.claim("agent", b.agents, name, f.name(), f.rel) {
		return
	}
	b.pkg.Agents = append(b.pkg.Agents, Agent{
		Name:        name,
		Invocation:  "/" + b.pkg.Name + ":agent:" + name,
		Description: fm.str("description"),
		Path:        f.rel,
	})
}

// finish shows empty lists as [] rather than null, and sorts the config
// files (the items keep their discovery order, which is deterministic).
func (b *builder) finish() {
	p := b.pkg
	p.Skills, p.Commands, p.Agents = NonNil(p.Skills), NonNil(p.Commands), NonNil(p.Agents)
	p.Hooks, p.MCPServers, p.Warnings = NonNil(p.Hooks), NonNil(p.MCPServers), NonNil(p.Warnings)
	p.scripts = scriptsOf(p, b.t.readFile)
	p.RuntimeFetches = RuntimeFetchesOf(p)
	sort.Strings(p.configFiles)
}
