package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"reasonix.io/plugind/internal/parity"
)

// skeletonsCmd is `sidebyside skeletons -corpus DIR -market OWNER__NAME
// -mirrors DIR -out DIR`: from the fetched repositories of one corpus
// marketplace, it writes the skeletons (internal/parity/skeleton.go) the
// corpus parity test serves in their place: the marketplace's repository
// reduced to its relative entries' folders, and each remote entry's
// repository (brought here) at the commit the entry names.
func skeletonsCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("skeletons", flag.ContinueOnError)
	corpus := fs.String("corpus", "", "the corpus folder (../shared/corpus)")
	market := fs.String("market", "", "the marketplace's corpus folder name, OWNER__NAME")
	mirrors := fs.String("mirrors", "", "where fetched repositories are (DIR/OWNER+NAME/repo)")
	out := fs.String("out", "", "the folder to write the skeletons into (its old skeletons are replaced)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *corpus == "" || *market == "" || *mirrors == "" || *out == "" {
		return errors.New("skeletons: -corpus, -market, -mirrors and -out are required")
	}
	ctx := context.Background()
	mdir := filepath.Join(*corpus, *market)
	doc, err := os.ReadFile(filepath.Join(mdir, "marketplace.json"))
	if err != nil {
		return fmt.Errorf("skeletons: %w", err)
	}
	var m struct {
		Metadata struct {
			PluginRoot string `json:"pluginRoot"`
		} `json:"metadata"`
		Plugins []json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		return fmt.Errorf("skeletons: %s: %w", *market, err)
	}
	_, entries, err := parity.ParseMarketplace(*market, doc)
	if err != nil {
		return err
	}
	verbatim, err := corpusFiles(filepath.Join(mdir, "SOURCE.txt"))
	if err != nil {
		return err
	}
	repo := strings.Replace(*market, "__", "/", 1)
	b := &skeletonBuilder{ctx: ctx, mirrors: *mirrors, byKey: map[string]*skeletonPlan{}}
	mgit := b.gitDir(repo)
	if mgit == "" {
		return fmt.Errorf("skeletons: %s is not in %s", repo, *mirrors)
	}
	head, err := parity.Git(ctx, mgit, nil, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	// The marketplace document itself, whatever its entries; and the whole
	// repository when its root is a plugin too (then the plugin wins:
	// SPEC §7, and reasonix installs the root).
	mroots := []string{".claude-plugin"}
	for _, m := range []string{".claude-plugin/plugin.json", ".codex-plugin/plugin.json", "reasonix-plugin.json"} {
		if _, err := parity.Git(ctx, mgit, nil, "cat-file", "-e", head+":"+m); err == nil {
			mroots = append(mroots, ".")
			break
		}
	}
	b.add(repo, mgit, head, "", mroots, nil, verbatim)
	var notHere []string
	for i, e := range entries {
		raw := m.Plugins[i]
		switch {
		case e.Kind == "relative":
			roots := []string{path.Clean(strings.TrimPrefix(e.Path, "./"))}
			if m.Metadata.PluginRoot != "" && !strings.HasPrefix(e.Path, "./") {
				roots = append(roots, path.Join(strings.TrimPrefix(m.Metadata.PluginRoot, "./"), e.Path))
			}
			b.add(repo, mgit, head, "", roots, raw, verbatim)
		case e.Kind == "github" || e.Kind == "url" || e.Kind == "git-subdir":
			g := b.gitDir(e.Repo)
			if g == "" {
				notHere = append(notHere, e.Repo)
				continue
			}
			var ref string
			_ = json.Unmarshal(raw, &struct {
				Source *struct {
					Ref *string `json:"ref"`
				} `json:"source"`
			}{Source: &struct {
				Ref *string `json:"ref"`
			}{Ref: &ref}})
			commit := e.SHA
			if commit == "" {
				rev := "HEAD"
				if ref != "" {
					rev = ref
				}
				if commit, err = parity.Git(ctx, g, nil, "rev-parse", "--verify", "-q", rev+"^{commit}"); err != nil {
					notHere = append(notHere, e.Repo+"@"+rev)
					continue
				}
			} else if _, err := parity.Git(ctx, g, nil, "cat-file", "-e", commit+"^{commit}"); err != nil {
				notHere = append(notHere, e.Repo+"@"+commit)
				continue
			}
			root := "."
			if e.Kind == "git-subdir" && e.Path != "" {
				root = path.Clean(strings.TrimPrefix(e.Path, "./"))
			}
			var files map[string]string
			if e.Repo == repo && commit == head {
				files = verbatim
			}
			if e.SHA == "" && ref != "" {
				b.add(e.Repo, g, commit, ref, []string{root}, raw, files)
			} else {
				b.add(e.Repo, g, commit, "", []string{root}, raw, files)
			}
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(*out, "*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(b.byKey))
	for k := range b.byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	files, size := 0, 0
	for _, k := range keys {
		sk, err := b.byKey[k].build(ctx)
		if errors.Is(err, errIncomplete) {
			notHere = append(notHere, fmt.Sprint(err))
			continue
		}
		if err != nil {
			return err
		}
		data, err := sk.Marshal()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, parity.SkeletonFileName(sk.Repo, sk.Commit)), data, 0o644); err != nil {
			return err
		}
		files += len(sk.Files)
		size += len(data)
	}
	sort.Strings(notHere)
	fmt.Fprintf(stdout, "skeletons of %s: %d repositories, %d files, %d bytes; not brought here: %s\n",
		*market, len(keys), files, size, strings.Join(notHere, ", "))
	return nil
}

// errIncomplete is a snapshot that lacks a file a skeleton needs.
var errIncomplete = errors.New("incomplete snapshot")

// corpusFiles reads SOURCE.txt's "ORIGINAL -> SAVED" lines: the files the
// corpus holds verbatim, by their path in the repository.
func corpusFiles(source string) (map[string]string, error) {
	f, err := os.Open(source)
	if err != nil {
		return nil, fmt.Errorf("skeletons: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		orig, saved, ok := strings.Cut(sc.Text(), " -> ")
		if ok {
			out[orig] = saved
		}
	}
	return out, sc.Err()
}

type skeletonBuilder struct {
	ctx     context.Context
	mirrors string
	byKey   map[string]*skeletonPlan
}

// treeEntry is a file of a commit's tree: its mode and blob.
type treeEntry struct{ mode, sha string }

// skeletonPlan is one repository at one commit and the plugin folders in it.
type skeletonPlan struct {
	repo, gitDir, commit string
	refs                 map[string]bool
	roots                map[string]bool
	declared             map[string]bool // paths manifests and entries declare
	declaredMD           map[string]bool // …in fields whose files are .md ones (commands, agents, prompts)
	entries              []json.RawMessage
	verbatim             map[string]string
}

func (b *skeletonBuilder) gitDir(repo string) string {
	return parity.MirrorGitDir(b.ctx, b.mirrors, repo)
}

func (b *skeletonBuilder) add(repo, gitDir, commit, ref string, roots []string, entry json.RawMessage, verbatim map[string]string) {
	k := repo + "@" + commit
	p := b.byKey[k]
	if p == nil {
		p = &skeletonPlan{repo: repo, gitDir: gitDir, commit: commit, refs: map[string]bool{},
			roots: map[string]bool{}, declared: map[string]bool{}, declaredMD: map[string]bool{}, verbatim: verbatim}
		b.byKey[k] = p
	}
	if ref != "" {
		p.refs[ref] = true
	}
	for _, r := range roots {
		p.roots[r] = true
	}
	p.entries = append(p.entries, entry)
}

// conventionalJSON are the JSON files a plugin's inventory is read from
// by convention, wherever they are.
var conventionalJSON = map[string]bool{
	"plugin.json": true, "marketplace.json": true, "hooks.json": true, ".mcp.json": true,
	".lsp.json": true, "settings.json": true, "reasonix-plugin.json": true,
}

func (p *skeletonPlan) build(ctx context.Context) (*parity.Skeleton, error) {
	list, err := parity.Git(ctx, p.gitDir, nil, "ls-tree", "-r", "-z", "--full-tree", p.commit)
	if err != nil {
		return nil, err
	}
	tree := map[string]treeEntry{}
	for _, ent := range strings.Split(list, "\x00") {
		meta, name, ok := strings.Cut(ent, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) == 3 {
			tree[name] = treeEntry{f[0], f[2]}
		}
	}
	// Declared paths: every path-like string of the entries and of the
	// manifests in the plugin folders, resolved against the folder.
	for root := range p.roots {
		for _, m := range []string{".claude-plugin/plugin.json", ".codex-plugin/plugin.json", "reasonix-plugin.json"} {
			te, ok := tree[path.Join(root, m)]
			if !ok || te.mode == "120000" {
				continue
			}
			data, err := parity.Git(ctx, p.gitDir, nil, "cat-file", "blob", te.sha)
			if err == nil {
				p.declare(root, []byte(data))
			}
		}
		for _, e := range p.entries {
			p.declare(root, e)
		}
	}
	head, err := parity.Git(ctx, p.gitDir, nil, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	sk := &parity.Skeleton{About: parity.SkeletonAbout, Repo: p.repo, Commit: p.commit, Head: head == p.commit,
		Files: map[string]parity.SkeletonFile{}}
	for r := range p.refs {
		sk.Refs = append(sk.Refs, r)
	}
	sort.Strings(sk.Refs)
	keep := func(name string) error {
		te := tree[name]
		f, err := p.file(ctx, name, te.mode, te.sha)
		if err != nil {
			return err
		}
		sk.Files[name] = f
		return nil
	}
	for name, te := range tree {
		if te.mode == "160000" && p.underRoot(name) {
			sk.Submodules = append(sk.Submodules, name)
		}
		if !p.underRoot(name) || !p.wanted(name, te.mode) {
			continue
		}
		if err := keep(name); err != nil {
			return nil, err
		}
	}
	if err := p.standIns(tree, sk.Files, keep); err != nil {
		return nil, err
	}
	sort.Strings(sk.Submodules)
	return sk, nil
}

// standIns are the files a skeleton keeps so that what it keeps stands as
// in the repository: the target of each link it keeps (a file, reduced as
// any kept file is since it is read through the link, or one file of a
// folder, so the link does not dangle), followed through links to links;
// and a placeholder for one file of each plugin folder nothing else holds
// (a plugin of README and LICENSE only still exists). keep adds a file to
// kept.
func (p *skeletonPlan) standIns(tree map[string]treeEntry, kept map[string]parity.SkeletonFile, keep func(string) error) error {
	names := make([]string, 0, len(tree))
	for n := range tree {
		names = append(names, n)
	}
	sort.Strings(names)
	firstUnder := func(dir string) (string, bool) {
		i := sort.SearchStrings(names, dir+"/")
		if i < len(names) && strings.HasPrefix(names[i], dir+"/") {
			return names[i], true
		}
		return "", false
	}
	holds := func(dir string) bool {
		for n := range kept {
			if strings.HasPrefix(n, dir+"/") {
				return true
			}
		}
		return false
	}
	add := func(n string) error {
		if _, ok := kept[n]; ok {
			return nil
		}
		return keep(n)
	}
	var links []string
	for n := range kept {
		if tree[n].mode == "120000" {
			links = append(links, n)
		}
	}
	sort.Strings(links)
	for len(links) > 0 {
		link := links[0]
		links = links[1:]
		target := path.Join(path.Dir(link), kept[link].Symlink)
		if target == ".." || strings.HasPrefix(target, "../") {
			continue
		}
		if te, ok := tree[target]; ok {
			if _, had := kept[target]; !had && te.mode == "120000" {
				links = append(links, target)
			}
			if err := add(target); err != nil {
				return err
			}
			continue
		}
		if first, ok := firstUnder(target); ok && !holds(target) {
			if err := add(first); err != nil {
				return err
			}
		}
	}
	roots := make([]string, 0, len(p.roots))
	for r := range p.roots {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	for _, r := range roots {
		if first, ok := firstUnder(r); ok && r != "." && !holds(r) && tree[first].mode != "120000" {
			kept[first] = parity.SkeletonFile{} // its content is not read
		}
	}
	return nil
}

func (p *skeletonPlan) underRoot(name string) bool {
	for r := range p.roots {
		if r == "." || name == r || strings.HasPrefix(name, r+"/") {
			return true
		}
	}
	return false
}

// componentFields are the manifest and entry fields that declare
// component paths (Claude's, Codex's and the native manifest's).
var componentFields = []string{"skills", "commands", "agents", "hooks", "mcpServers", "lspServers",
	"outputStyles", "themes", "workflows", "monitors", "experimental", "prompts", "apps"}

// mdFields are the component fields whose files are markdown ones, every
// one of a folder they name counting (a command or an agent each).
var mdFields = map[string]bool{"commands": true, "agents": true, "prompts": true}

// declare records the path-like strings of a JSON document's component
// fields, against root and against the repository's root (a strict:false
// entry may write them from there).
func (p *skeletonPlan) declare(root string, doc []byte) {
	var top map[string]any
	if json.Unmarshal(doc, &top) != nil {
		return
	}
	var walk func(v any, into ...map[string]bool)
	walk = func(v any, into ...map[string]bool) {
		switch t := v.(type) {
		case map[string]any:
			for _, x := range t {
				walk(x, into...)
			}
		case []any:
			for _, x := range t {
				walk(x, into...)
			}
		case string:
			if strings.ContainsAny(t, " \t\n") || strings.Contains(t, "://") || !strings.Contains(t, "/") && !strings.HasPrefix(t, ".") {
				return
			}
			rel := strings.TrimPrefix(t, "./")
			for _, m := range into {
				m[path.Join(root, rel)] = true
				m[path.Clean(rel)] = true
			}
		}
	}
	for _, f := range componentFields {
		if mdFields[f] {
			walk(top[f], p.declared, p.declaredMD)
		} else {
			walk(top[f], p.declared)
		}
	}
}

// wanted says whether a file decides an inventory (see parity.Skeleton).
func (p *skeletonPlan) wanted(name, mode string) bool {
	base := path.Base(name)
	ext := strings.ToLower(path.Ext(name))
	switch {
	case mode == "120000":
		return true
	case mode == "160000":
		return false // a submodule: its content is another repository
	case base == "SKILL.md", base == "CLAUDE.md", base == "AGENTS.md":
		return true
	case ext == ".md" && (hasComponent(name, "commands") || hasComponent(name, "agents") || p.declared[name] || under(p.declaredMD, name)):
		// A skill's other markdown (references, examples) decides nothing.
		return true
	case ext == ".json" && (conventionalJSON[base] || p.declared[name]):
		// A JSON file decides an inventory by its conventional name or
		// when a component field names it (hooks, mcpServers, lspServers
		// files); the JSON files of a declared folder (a skill's assets)
		// do not, and their structure is the repository's content.
		return true
	case strings.HasSuffix(name, "hooks/session-start-codex"):
		return true
	}
	return false
}

func hasComponent(name, c string) bool {
	return strings.HasPrefix(name, c+"/") || strings.Contains(name, "/"+c+"/")
}

// under says whether name is, or lies in, a path of set.
func under(set map[string]bool, name string) bool {
	for d := name; d != "." && d != "/"; d = path.Dir(d) {
		if set[d] {
			return true
		}
	}
	return false
}

func (p *skeletonPlan) file(ctx context.Context, name, mode, sha string) (parity.SkeletonFile, error) {
	if mode == "120000" {
		target, err := parity.Git(ctx, p.gitDir, nil, "cat-file", "blob", sha)
		return parity.SkeletonFile{Symlink: target}, err
	}
	if saved, ok := p.verbatim[name]; ok {
		return parity.SkeletonFile{Corpus: saved}, nil
	}
	if _, err := parity.Git(ctx, p.gitDir, nil, "cat-file", "-e", sha); err != nil {
		// Fetch leaves out files of 4 MiB and more: Claude could not
		// clone this commit either, so its entries have no golden.
		return parity.SkeletonFile{}, fmt.Errorf("%w: %s@%s lacks %s", errIncomplete, p.repo, p.commit, name)
	}
	cmd := exec.CommandContext(ctx, "git", "--git-dir", p.gitDir, "cat-file", "blob", sha)
	data, err := cmd.Output()
	if err != nil {
		return parity.SkeletonFile{}, fmt.Errorf("skeletons: %s %s: %w", p.repo, name, err)
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".md":
		return parity.SkeletonFile{Name: parity.MarkdownName(data)}, nil
	case ".json":
		if masked, ok := parity.MaskJSON(data); ok {
			return parity.SkeletonFile{JSON: masked}, nil
		}
		return parity.SkeletonFile{Unparsable: true}, nil
	}
	return parity.SkeletonFile{}, nil
}
