package installer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
)

// Validation is what `reasonix plugin validate` and POST /plugins/validate
// report: ok is false exactly when there are errors. Every finding names
// the JSON path of the field it is about ("" for the document as a
// whole), and, when it is not the document given, the file (relative to
// the folder or source validated) and the marketplace entry ("plugins[3]")
// it belongs to. Checked lists every document and folder read, and the
// entries that were not followed, with why.
type Validation struct {
	OK     bool             `json:"ok"`
	Target ValidationTarget `json:"target"`
	manifest.Report
}

// ValidationTarget says what was validated: kind is "plugin" or
// "marketplace"; mode is "file" (that document, and what Claude Code's
// validator reads beside it), "folder" or "source" (also every plugin it
// references that can be reached).
type ValidationTarget struct {
	Kind   string `json:"kind"`
	Mode   string `json:"mode"`
	Path   string `json:"path"`
	Commit string `json:"commit,omitempty"`
}

// ValidateOptions adjust Validate.
type ValidateOptions struct {
	// Offline reads a source from the cache only.
	Offline bool
	// Open gives the installer that resolves a source; it is called only
	// for one (a file or a folder needs none), and done is called after.
	Open func(ctx context.Context) (in *Installer, done func(), err error)
	// NoWorkingDir: the caller's relative paths name nothing here (the
	// daemon; see Config.NoWorkingDir), so one is refused, as plan
	// refuses it.
	NoWorkingDir bool
}

// Validate checks target — a plugin.json or marketplace.json file, a
// plugin or marketplace folder, or a source fetched as install fetches
// it — by the document tables install reads: Claude Code's verdict, with
// what Reasonix reads differently or refuses named.
func Validate(ctx context.Context, target string, opts ValidateOptions) (*Validation, error) {
	// A target is parsed as a source once; it may still be a file or
	// folder that is not one (a plugin.json).
	src, srcErr := source.Parse(target)
	if opts.NoWorkingDir && srcErr == nil && src.IsLocal() && !filepath.IsAbs(src.Path) {
		return nil, relativeRefusal(target, src, false, nil)
	}
	info, statErr := os.Stat(target)
	var (
		v   *Validation
		err error
	)
	switch {
	case statErr == nil && info.IsDir():
		v = validateDir(target)
	case statErr == nil && info.Mode().IsRegular() && !strings.EqualFold(filepath.Ext(target), ".zip"):
		v, err = validateFile(target)
	case statErr == nil && !info.Mode().IsRegular():
		// A named pipe or a device (or a link to one) is never opened.
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s is %s, not a file or folder: not read", target, plugind.DescribeType(info.Mode()))
	default:
		v, err = validateSource(ctx, target, src, srcErr, statErr, opts)
	}
	if err != nil {
		return nil, err
	}
	v.finish()
	return v, nil
}

// finish fixes the verdict and masks credentials in everything quoted
// from the documents (a source URL may carry a token).
func (v *Validation) finish() {
	for _, fs := range [][]manifest.Finding{v.Errors, v.Warnings} {
		for i := range fs {
			fs[i].Message, fs[i].Path = secrets.Mask(fs[i].Message), secrets.Mask(fs[i].Path)
		}
	}
	v.Errors, v.Warnings, v.Checked = manifest.NonNil(v.Errors), manifest.NonNil(v.Warnings), manifest.NonNil(v.Checked)
	v.Target.Path = secrets.Mask(v.Target.Path)
	v.OK = len(v.Errors) == 0
}

// validateFile checks one document: its kind comes from its name, as
// Claude Code decides it (plugin.json, marketplace.json, a file in
// .claude-plugin/), else from its content (a "plugins" array makes a
// marketplace).
func validateFile(p string) (*Validation, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	base, dir := filepath.Base(abs), filepath.Base(filepath.Dir(abs))
	v := &Validation{Target: ValidationTarget{Kind: "plugin", Mode: "file", Path: p}}
	kind := manifest.KindClaude
	switch {
	case base == manifest.NativeManifest:
		kind = manifest.KindReasonix
	case base == "plugin.json" && dir == ".codex-plugin":
		kind = manifest.KindCodex
	case base == "plugin.json", dir == ".claude-plugin" && base != "marketplace.json":
	case base == "marketplace.json" || holdsPlugins(abs):
		v.Target.Kind = "marketplace"
		root, _ := marketplace.RootOf(abs)
		r, _ := marketplace.ValidateLocal(abs, marketplace.ValidateOptions{})
		v.Merge(relativeTo(r, base, root, filepath.Dir(abs)), "", "")
		return v, nil
	}
	root := filepath.Dir(abs)
	if dir == ".claude-plugin" || dir == ".codex-plugin" {
		root = filepath.Dir(root)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, err
	}
	// Read as install reads it: confined to the plugin's folder, a regular
	// file, bounded. A document that cannot be read so is a finding.
	data, err := manifest.ReadFile(root, filepath.ToSlash(rel), manifest.MaxManifestBytes)
	if err != nil {
		v.Errors = append(v.Errors, manifest.Finding{Message: manifest.Unreadable(err)})
		return v, nil
	}
	v.Checked = append(v.Checked, manifest.Checked{Kind: "manifest", File: base})
	if kind != manifest.KindClaude {
		if _, err := manifest.Parse(kind, data, root, manifest.LoadOptions{}); err != nil {
			v.Errorf("", "%v", err)
		}
	} else {
		v.Merge(manifest.CheckClaudeManifest(data, root), "", "")
		if dir == ".claude-plugin" {
			// Claude's validator also reads the folder's skills, agents,
			// commands and hooks.json when given .claude-plugin/plugin.json.
			v.Merge(manifest.CheckPluginContent(root, ""), "", "")
		}
	}
	return v, nil
}

// holdsPlugins reports whether the JSON file at p is an object with a
// "plugins" array: a marketplace by its content.
func holdsPlugins(p string) bool {
	data, err := manifest.ReadFile(filepath.Dir(p), filepath.Base(p), marketplace.MaxDocumentBytes)
	if err != nil {
		return false
	}
	data, _ = jsondoc.TrimBOM(data)
	doc, _, err := jsondoc.Parse(data)
	return err == nil && doc.Get("plugins") != nil && doc.Get("plugins").Kind == jsondoc.Array
}

// relativeTo rewrites the files a marketplace report names (relative to
// its root) relative to the folder of the document given, and the
// document itself as "" — the file given is the report's subject.
func relativeTo(r manifest.Report, docBase, root, docDir string) manifest.Report {
	fix := func(f string) string {
		if f == "" {
			return ""
		}
		full := filepath.Join(root, filepath.FromSlash(f))
		if filepath.Join(docDir, docBase) == full {
			return ""
		}
		if rel, err := filepath.Rel(docDir, full); err == nil {
			return filepath.ToSlash(rel)
		}
		return f
	}
	for _, fs := range [][]manifest.Finding{r.Errors, r.Warnings} {
		for i := range fs {
			fs[i].File = fix(fs[i].File)
		}
	}
	for i := range r.Checked {
		r.Checked[i].File = cmp.Or(fix(r.Checked[i].File), docBase)
	}
	return r
}

// validateDir checks a folder: a marketplace (where marketplace.Find says
// its document is) with every plugin folder it lists, else a plugin
// folder.
func validateDir(dir string) *Validation {
	v := &Validation{Target: ValidationTarget{Mode: "folder", Path: dir}}
	if found, ok := marketplace.Find(dir); ok {
		v.Target.Kind = "marketplace"
		r, refs := marketplace.ValidateLocal(filepath.Join(dir, filepath.FromSlash(found.Path)), marketplace.ValidateOptions{Deep: true})
		if note := found.Note(); note != "" {
			r.Warnings = append(r.Warnings, manifest.Finding{File: found.Also[0].Path, Message: note})
		}
		reservedName(&r, found, dir, source.Source{Kind: source.LocalDir, Path: dir})
		v.Merge(r, "", "")
		if rootPluginUnlisted(dir, refs) {
			// The folder is a plugin too, and no entry lists it.
			v.Merge(manifest.ValidatePluginDir(dir, manifest.ValidateOptions{}), "", "")
		}
		return v
	}
	for _, d := range marketplace.Documents {
		// A document that is there but not a file inside the folder (a
		// link out of it, a pipe) is never read: say so.
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(d.Path))); err == nil {
			_, err := manifest.ReadFile(dir, d.Path, marketplace.MaxDocumentBytes)
			v.Target.Kind = "marketplace"
			v.Errors = append(v.Errors, manifest.Finding{File: d.Path, Message: "the marketplace " + manifest.Unreadable(err)})
			return v
		}
	}
	v.Target.Kind = "plugin"
	v.Merge(manifest.ValidatePluginDir(dir, manifest.ValidateOptions{}), "", "")
	return v
}

// reservedName adds, as a warning that says Reasonix refuses it, a
// marketplace name Claude Code reserves for official marketplaces coming
// from somewhere it does not accept it from: Claude Code's validator
// passes the document, its marketplace add refuses it, and so does
// Reasonix's add and install.
func reservedName(r *manifest.Report, found marketplace.Found, root string, src source.Source) {
	data, err := found.Read(root)
	if err != nil {
		return
	}
	data, _ = jsondoc.TrimBOM(data)
	doc, _, err := jsondoc.Parse(data)
	if err != nil {
		return
	}
	if err := marketplace.CheckReservedName(doc.GetStr("name"), src); err != nil {
		r.Refuse("name", "Reasonix refuses it, as Claude Code's marketplace add does", "%v", err)
	}
}

// rootPluginUnlisted reports a plugin manifest at a marketplace's root
// that none of its entries points at.
func rootPluginUnlisted(dir string, refs []marketplace.Ref) bool {
	_, _, err := manifest.Detect(dir)
	return err == nil && !slices.ContainsFunc(refs, func(ref marketplace.Ref) bool { return ref.Local == "." })
}

// validateSource resolves a source the way install does and validates
// what it names. A marketplace's document and its relative entries are
// read from the fetched tree; its remote entries are then fetched too
// (one fetch per repository and commit, as in a bulk install), and one
// that cannot be is a warning.
func validateSource(ctx context.Context, arg string, src source.Source, err, statErr error, opts ValidateOptions) (*Validation, error) {
	if err != nil {
		if statErr != nil && !errors.Is(statErr, os.ErrNotExist) {
			return nil, statErr
		}
		return nil, fmt.Errorf("%q is neither a file, a folder nor a source: %w", arg, err)
	}
	if src.Kind == source.MarketEntry {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s names an entry of a known marketplace: validate the marketplace's source or folder instead", arg)
	}
	if src.IsLocal() && statErr != nil {
		return nil, plugind.Errorf(plugind.CodeNotFound, "%s: no such file or folder", arg)
	}
	if opts.Open == nil {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s is a source: validating it needs a Reasonix home to fetch it into", arg)
	}
	in, done, err := opts.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	f, err := in.Sources.Resolve(ctx, resolver.Request{Source: src, DocumentOnly: true, Offline: opts.Offline})
	if err != nil {
		return nil, err
	}
	v := &Validation{Target: ValidationTarget{Mode: "source", Path: f.Source.String(), Commit: f.Commit}}
	if f.Kind != resolver.KindMarketplace {
		if len(f.Candidates) != 1 || f.Candidates[0].Dir == "" {
			return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s resolved to no plugin folder", arg)
		}
		v.Target.Kind = "plugin"
		v.Merge(manifest.ValidatePluginDir(f.Candidates[0].Dir, manifest.ValidateOptions{}), "", "")
		return v, nil
	}
	v.Target.Kind = "marketplace"
	root, err := in.marketplaceRootIn(f)
	if err != nil {
		return nil, err
	}
	found, _ := marketplace.Find(root)
	r, refs := marketplace.ValidateLocal(filepath.Join(root, filepath.FromSlash(found.Path)), marketplace.ValidateOptions{Deep: true})
	reservedName(&r, found, root, src)
	if f.Market != nil && f.Market.Repo == "" {
		// A local folder or zip: its remote entries are fetched too.
		v.Target.Commit = ""
	}
	fetched := in.fetchRemoteEntries(ctx, src, opts.Offline, refs)
	for i := range r.Checked {
		c := &r.Checked[i]
		if out, ok := fetched[c.Entry]; ok && c.Kind == "entry" {
			*c = out.checked
		}
	}
	if note := found.Note(); note != "" {
		r.Warnings = append(r.Warnings, manifest.Finding{File: found.Also[0].Path, Message: note})
	}
	v.Merge(r, "", "")
	for _, ref := range refs { // in document order
		if out, ok := fetched[ref.At]; ok {
			v.Errors = append(v.Errors, out.report.Errors...)
			v.Warnings = append(v.Warnings, out.report.Warnings...)
		}
	}
	return v, nil
}

// marketplaceRootIn finds the root of a resolved marketplace source: the
// folder itself, or its place in the store snapshot it was read from.
func (in *Installer) marketplaceRootIn(f *resolver.Fetched) (string, error) {
	if f.Market != nil && f.Market.Repo == "" && len(f.Snapshots) == 0 && f.Source.IsLocal() && marketplace.Has(f.Source.Path) {
		return f.Source.Path, nil // a local folder
	}
	for _, digest := range f.Snapshots {
		dir, err := in.Store.Path(digest)
		if err != nil {
			continue
		}
		for _, base := range []string{filepath.Join(dir, filepath.FromSlash(f.Subdir)), dir} {
			if marketplace.Has(base) {
				return base, nil
			}
		}
	}
	return "", plugind.Errorf(plugind.CodeSourceUnreadable, "%s: the marketplace document is not in the fetched tree", f.Source)
}

// fetchedEntry is one remote entry after fetching.
type fetchedEntry struct {
	checked manifest.Checked
	report  manifest.Report
}

// fetchRemoteEntries resolves a marketplace's remote entries (those with
// no error of their own) as a bulk install would and validates each
// folder with its entry. An entry that cannot be fetched — a repository
// or commit that does not exist, an unpinned entry, offline — is a
// warning: the document is what is being validated, and Claude Code's
// validator does not fetch.
func (in *Installer) fetchRemoteEntries(ctx context.Context, src source.Source, offline bool, refs []marketplace.Ref) map[string]fetchedEntry {
	out := map[string]fetchedEntry{}
	byName := map[string]marketplace.Ref{}
	var names []string
	for _, ref := range refs {
		if !ref.Remote || !ref.Valid || ref.Name == "" {
			continue
		}
		if _, dup := byName[ref.Name]; dup {
			continue
		}
		byName[ref.Name] = ref
		names = append(names, ref.Name)
	}
	if len(names) == 0 {
		return out
	}
	notFetched := func(ref marketplace.Ref, said string, err error) {
		out[ref.At] = fetchedEntry{checked: manifest.Checked{Kind: "entry", Entry: ref.At, Name: ref.Name, Note: "not fetched: " + err.Error()},
			report: manifest.Report{Warnings: []manifest.Finding{{Entry: ref.At, Path: ref.At + ".source", Message: said + err.Error()}}}}
	}
	f, err := in.Sources.Resolve(ctx, resolver.Request{Source: src, Names: names, Offline: offline})
	if err != nil {
		for _, n := range names {
			notFetched(byName[n], "not fetched: ", err)
		}
		return out
	}
	for _, c := range f.Candidates {
		ref, ok := byName[c.Name]
		if !ok {
			continue
		}
		var r manifest.Report
		switch {
		case c.Err != nil:
			notFetched(ref, "cannot be fetched, so its plugin was not checked: ", c.Err)
		case c.Dir != "":
			r.Merge(manifest.ValidatePluginDir(c.Dir, manifest.ValidateOptions{Implied: c.Name, Entry: c.Manifest, Prefer: c.Prefer, ContentAsWarnings: true}), ref.At, "")
			out[ref.At] = fetchedEntry{checked: manifest.Checked{Kind: "plugin", Entry: ref.At, Name: c.Name, File: c.Source.String()}, report: r}
		}
	}
	return out
}
