package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
)

// This file checks what a plugin folder holds beyond its manifest document:
// that declared component paths exist (Claude's validator refuses a missing
// one), the front matter of skills, agents and commands, hooks/hooks.json,
// and — Reasonix's own verdict — what the installer would make of it.

// checkDeclaredPaths checks the component paths a Claude manifest (or a
// marketplace entry's manifest fields) declares against the plugin folder
// the walk was given, as Claude Code's validator does: the fields whose row
// is Located (commands, hooks, agents, skills — which must be folders —
// and workflows). Reasonix adds one rule: a path whose symlinks lead out
// of the folder is a problem, since the installer never follows one. In
// plugin.json each problem is an error; in an entry a warning, since
// Claude Code installs the plugin and skips the path.
func checkDeclaredPaths(w *jsondoc.Walk, at string, doc *node) {
	f, _ := w.Ctx.(*folder)
	if f != nil && f.err != nil {
		w.Errorf("", "cannot read the plugin folder: %v", f.err)
	}
	if f == nil || f.t == nil {
		return
	}
	t := f.t
	problem := func(where, format string, args ...any) {
		if f.entry {
			w.Warnf(where, "%s; Claude Code and Reasonix skip it", fmt.Sprintf(format, args...))
			return
		}
		w.Errorf(where, format, args...)
	}
	check := func(p, where string, wantDir bool) {
		if strings.Contains(p, "..") {
			problem(where, "path %q contains \"..\": component paths must stay inside the plugin folder", jsondoc.Clip(p, 80))
			return
		}
		if filepath.IsAbs(p) || path.IsAbs(p) {
			return // the schema already refused it ("./" is required)
		}
		_, real, err := t.resolve(p)
		switch {
		case errors.Is(err, errMissing):
			problem(where, "path %q does not exist in the plugin folder", jsondoc.Clip(p, 80))
		case errors.Is(err, ErrOutside):
			problem(where, "path %q leaves the plugin folder (through a symlink or an unsafe form)", jsondoc.Clip(p, 80))
		case err != nil:
			problem(where, "path %q cannot be read: %v", jsondoc.Clip(p, 80), err)
		default:
			if info, err := os.Stat(real); !wantDir || err != nil || info.IsDir() {
				return
			}
			hint := ""
			if dir := path.Dir(p); strings.EqualFold(path.Base(p), "SKILL.md") && dir != "." {
				hint = fmt.Sprintf(" (point to its folder %q instead)", dir)
			}
			problem(where, "path %q is a file: a skills entry must be a folder holding SKILL.md%s", jsondoc.Clip(p, 80), hint)
		}
	}
	for _, row := range w.Table().Rows {
		if row.Traits&jsondoc.Located == 0 {
			continue
		}
		key, wantDir := row.Key, row.Traits&jsondoc.Directories != 0
		n := doc.Get(key)
		p := jsondoc.Join(at, key)
		switch {
		case n == nil:
		case n.Kind == jsondoc.String:
			// Claude reports a lone path by index for hooks, agents, skills
			// and workflows, and by the field name for commands.
			where := jsondoc.Index(p, 0)
			if key == "commands" {
				where = p
			}
			check(n.Str, where, wantDir)
		case n.Kind == jsondoc.Array:
			for i := range n.Items {
				if it := &n.Items[i]; it.Kind == jsondoc.String {
					check(it.Str, jsondoc.Index(p, i), wantDir)
				}
			}
		case n.Kind == jsondoc.Object && key == "commands":
			for _, c := range n.Fields {
				if src := c.Val.Get("source"); src != nil && src.Kind == jsondoc.String {
					check(src.Str, jsondoc.Join(jsondoc.Join(p, c.Key), "source"), false)
				}
			}
		}
	}
}

// frontMatterBlock is how Claude Code finds a markdown file's front
// matter: "---" at the very start, the shortest run up to the next "---".
var frontMatterBlock = lazyregexp.New(`^---\s*\n([\s\S]*?)---\s*\n?`)

// CheckPluginContent checks the files Claude's validator reads in the
// plugin folder root when given its .claude-plugin/plugin.json:
// skills/*/SKILL.md, agents/**/*.md and commands/**/*.md front matter, and
// a CLAUDE.md at the root (not loaded), demoted to warnings saying why
// when demote is not ""; then hooks/hooks.json (Claude Code fails to load
// a plugin whose hooks file it cannot read, so those findings are never
// demoted). Findings name their file, relative to root.
func CheckPluginContent(root, demote string) Report {
	var r Report
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		switch strings.ToLower(e.Name()) {
		case "claude.md":
			r.Warnings = append(r.Warnings, Finding{File: e.Name(), Message: e.Name() + " at the plugin root is not loaded as project context; ship context as a skill (skills/<name>/SKILL.md) instead"})
		case "claude.local.md":
			r.Warnings = append(r.Warnings, Finding{File: e.Name(), Message: e.Name() + " at the plugin root is not loaded; remove it from the plugin"})
		}
	}
	// check reads rel as install reads it and judges what it holds; an
	// absent file is fine.
	check := func(rel string, limit int64, judge func(data []byte) Report) {
		data, err := ReadFile(root, rel, limit)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			r.Errors = append(r.Errors, Finding{File: rel, Message: Unreadable(err)})
		default:
			r.Merge(judge(data), "", rel)
		}
	}
	for _, kind := range []string{"skill", "agent", "command"} {
		for _, rel := range markdownFiles(root, kind) {
			check(rel, maxMarkdownBytes, func(data []byte) Report { return checkFrontMatter(string(data), kind) })
		}
	}
	if demote != "" {
		r.Demote(demote)
	}
	check("hooks/hooks.json", maxJSONBytes, func(data []byte) Report { return checkDocument(data, HooksFile(), nil) })
	return r
}

// markdownFiles lists, as slash paths under root, the SKILL.md of each
// folder in skills/ (kind "skill"), or every .md file under agents/ or
// commands/. Symlinks are not followed, as Claude's directory walk does
// not.
func markdownFiles(root, kind string) []string {
	var out []string
	base := kind + "s"
	_ = fs.WalkDir(os.DirFS(root), base, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return fs.SkipDir // unreadable: nothing of it is listed
		case p == base:
		case kind == "skill" && e.IsDir():
			out = append(out, p+"/SKILL.md")
			return fs.SkipDir
		case kind != "skill" && e.Type().IsRegular() && strings.HasSuffix(strings.ToLower(e.Name()), ".md"):
			out = append(out, p)
		}
		return nil
	})
	return out
}

// frontMatterKept is what becomes of a file whose front matter Claude's
// validator refuses: its loader reads the file anyway, without the
// metadata it cannot use, and so does Reasonix.
const frontMatterKept = "Claude Code's loader reads the file anyway, without this metadata, and so does Reasonix"

// checkFrontMatter applies Claude's front-matter rules to one skill, agent
// or command file.
func checkFrontMatter(text, kind string) (r Report) {
	m := frontMatterBlock.FindStringSubmatch(text)
	if m == nil {
		r.Warnf("frontmatter", "no front matter: add a YAML block between \"---\" lines at the top with at least a description")
		return
	}
	v, err := parseYAMLLoose(m[1])
	if err != nil {
		r.Keep("frontmatter", frontMatterKept, "YAML front matter does not parse (%v); Claude Code then loads this %s with no metadata at all", strings.TrimPrefix(err.Error(), "yaml: "), kind)
		return
	}
	fields, ok := v.(map[string]any)
	if !ok {
		r.Keep("frontmatter", frontMatterKept, "front matter must be a YAML mapping (key: value lines), found %s", yamlKind(v))
		return
	}
	if d, present := fields["description"]; !present {
		r.Warnf("description", "no description in the front matter: it tells users and the model when to use this %s", kind)
	} else if !yamlScalar(d) {
		r.Keep("description", frontMatterKept, "must be a string, found %s; Claude Code drops it", yamlKind(d))
	}
	if n, present := fields["name"]; present && n != nil {
		if _, isStr := n.(string); !isStr {
			r.Keep("name", frontMatterKept, "must be a string, found %s", yamlKind(n))
		}
	}
	if t, present := fields["allowed-tools"]; present && t != nil {
		switch t := t.(type) {
		case string:
		case []any:
			if slices.ContainsFunc(t, func(it any) bool { _, isStr := it.(string); return !isStr }) {
				r.Keep("allowed-tools", frontMatterKept, "the list must hold only strings")
			}
		default:
			r.Keep("allowed-tools", frontMatterKept, "must be a string or a list of strings, found %s", yamlKind(t))
		}
	}
	if sh, present := fields["shell"]; present && sh != nil {
		s, isStr := sh.(string)
		switch {
		case !isStr:
			r.Keep("shell", frontMatterKept, "must be a string, found %s", yamlKind(sh))
		case !strings.EqualFold(strings.TrimSpace(s), "bash") && !strings.EqualFold(strings.TrimSpace(s), "powershell"):
			r.Keep("shell", frontMatterKept, "must be \"bash\" or \"powershell\", found %q", jsondoc.Clip(s, 40))
		}
	}
	return r
}

// parseYAMLLoose decodes YAML as Claude Code's parser does where yaml.v3
// is stricter: a key given twice is not an error, the last one wins.
func parseYAMLLoose(text string) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 {
		return nil, nil // empty
	}
	return yamlValue(&doc, 0)
}

// yamlValue converts a node; depth bounds alias chains.
func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > 100 {
		return nil, errors.New("nested too deeply")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValue(n.Content[0], depth+1)
	case yaml.AliasNode:
		return yamlValue(n.Alias, depth+1)
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := yamlValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out[n.Content[i].Value] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// yamlScalar reports a value Claude keeps as a description: a string,
// number, boolean or null (a date is read as text).
func yamlScalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int64, uint64, float64, time.Time:
		return true
	}
	return false
}

func yamlKind(v any) string {
	switch v.(type) {
	case nil:
		return "nothing (null)"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// ValidateOptions adjust ValidatePluginDir.
type ValidateOptions struct {
	// Implied is the name a manifest-less folder is read under (a
	// marketplace entry's name); "" makes a folder without a manifest an
	// error.
	Implied string
	// Entry and Prefer are the plugin's marketplace entry and the
	// marketplace's format, when it comes from one: the folder is read
	// with them, as install reads it.
	Entry  *EntryManifest
	Prefer Kind
	// ContentAsWarnings reports problems in skills, agents and commands as
	// warnings: Claude Code's validator reads them only when validating
	// the plugin itself, not a marketplace listing it.
	ContentAsWarnings bool
}

// ValidatePluginDir validates a plugin folder: every manifest it holds
// (Claude's by Claude Code's rules, native and Codex ones by Reasonix's
// parsers), its marketplace entry's manifest fields, the component paths
// declared, the content files Claude's validator reads, and — as warnings
// saying so — what Reasonix's installer refuses that Claude Code accepts:
// a name it cannot install under, a package with nothing it maps. Findings
// name their file relative to root.
func ValidatePluginDir(root string, opts ValidateOptions) Report {
	var r Report
	t, err := openTree(root)
	if err != nil {
		r.Errorf("", "%v", err)
		return r
	}
	// What makes the installer refuse the folder as a whole, found as it
	// finds it (names and types only): install refuses exactly these.
	if _, err := plugind.ScanTree(root, plugind.DefaultBudget); err != nil {
		r.Errorf("", "install would refuse this folder: %v", err)
	}
	found, unreadable := 0, 0
	for _, m := range manifestOrder {
		data, err := t.readFile(m.path, maxJSONBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			r.Errors = append(r.Errors, Finding{File: m.path, Message: Unreadable(err)})
			unreadable++
			continue
		}
		found++
		r.Checked = append(r.Checked, Checked{Kind: "manifest", File: m.path})
		var mr Report
		if m.kind == KindClaude {
			mr = checkDocument(data, ClaudePlugin(), &folder{t: t})
		} else if _, err := t.parse(m.kind, data, LoadOptions{Name: opts.Implied}); err != nil {
			mr.Errorf("", "%s", strings.TrimPrefix(err.Error(), m.path+": "))
		}
		r.Merge(mr, "", m.path)
	}
	if opts.Entry != nil {
		checkEntryManifest(t, opts, &r)
	}
	if found+unreadable == 0 && opts.Implied == "" {
		r.Errorf("", "no plugin manifest: expected %s (or %s, %s)", ClaudeManifest, NativeManifest, CodexManifest)
	}
	if ok, _ := t.regularFile(ClaudeManifest); ok || found == 0 {
		demote := ""
		if opts.ContentAsWarnings {
			demote = "Claude Code's validator reports it as an error when validating the plugin folder"
		}
		r.Merge(CheckPluginContent(root, demote), "", "")
	}
	// Reasonix's verdict, where the checks above found no error (the
	// installer refuses the folder for those): its name rules are stricter
	// than Claude's, and a package with nothing Reasonix maps is blocked.
	// Each is a warning that says Reasonix refuses it (Claude Code accepts
	// it).
	if !r.OK() {
		return r
	}
	pkg, err := Load(root, LoadOptions{Name: opts.Implied, Implied: opts.Implied, Entry: opts.Entry, Prefer: opts.Prefer})
	switch {
	case err != nil:
		r.Refuse("", "Reasonix cannot install it", "Reasonix cannot install this plugin: %v", err)
	case pkg.Blocked:
		r.Refuse("", "Reasonix blocks it", "Reasonix would block this plugin: %s", pkg.BlockReason)
	default:
		// Code fetched at run time is installed (a warning here, shown in
		// every review); a mirror's "runtime": "block-unpinned" refuses it.
		for _, f := range pkg.RuntimeFetches {
			if f.Unpinned() {
				r.Warnings = append(r.Warnings, Finding{File: f.file, Message: RuntimeFetchNote(f)})
			}
		}
	}
	return r
}

// checkEntryManifest checks a marketplace entry's manifest fields against
// the plugin folder, as install reads them: a declared path that is not
// there is a warning; a strict: false entry that declares components
// beside a plugin.json is an error, Claude Code's "conflicting manifests".
func checkEntryManifest(t *tree, opts ValidateOptions, r *Report) {
	entry, err := parseJSON(entryLabel, opts.Entry.Doc)
	if err != nil || entry.Kind != jsondoc.Object {
		r.Errorf("", "the marketplace entry's fields are not a JSON object")
		return
	}
	doc := entryDoc(entry, opts.Implied, true)
	var er Report
	// Install's walk: the advice a plugin.json gets (no author…) is not
	// the entry's to heed.
	(&jsondoc.Walk{Report: &er, Mode: jsondoc.Install, Ctx: &folder{t: t, entry: true}}).Document(ClaudePlugin(), doc)
	named := func(f Finding) bool { return f.Path == "name" }
	r.Errors = append(r.Errors, slices.DeleteFunc(er.Errors, named)...)
	r.Warnings = append(r.Warnings, slices.DeleteFunc(er.Warnings, named)...)
	kind, _, err := t.detect(t.root, opts.Prefer)
	if err == nil && kind == KindClaude && !opts.Entry.Strict && declaresComponents(entry) {
		r.Errorf("", "%s", conflictingManifests)
	}
}
