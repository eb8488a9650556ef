package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/source"
)

// validation is what `plugin validate --json` prints: ok is false exactly
// when there are errors (the exit status is then 1). Every finding names
// the JSON path of the field it is about ("" for the document as a
// whole), and, when it is not the document given, the file (relative to
// the folder or source validated) and the marketplace entry ("plugins[3]")
// it belongs to. checked lists every document and folder read, and the
// entries that were not followed, with why.
type validation struct {
	OK       bool               `json:"ok"`
	Target   validationTarget   `json:"target"`
	Errors   []manifest.Finding `json:"errors"`
	Warnings []manifest.Finding `json:"warnings"`
	Checked  []manifest.Checked `json:"checked"`
}

// validationTarget says what was validated: kind is "plugin" or
// "marketplace"; mode is "file" (that document, and what Claude Code's
// validator reads beside it), "folder" or "source" (also every plugin it
// references that can be reached).
type validationTarget struct {
	Kind   string `json:"kind"`
	Mode   string `json:"mode"`
	Path   string `json:"path"`
	Commit string `json:"commit,omitempty"`
}

func (m *Main) validateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate FILE|DIR|SOURCE",
		Short: "Check a plugin or a marketplace the way Claude Code's `claude plugin validate` does",
		Long: `Validate a plugin or a marketplace and print its errors and warnings, each naming the JSON
field it is about. The structural rules are Claude Code's (claude plugin validate), so both tools
give the same verdict; Reasonix adds, as warnings, what its own installer would skip or refuse.

  FILE    a plugin.json or marketplace.json (any path): that document, plus what Claude Code's
          validator reads beside it (declared component paths; the plugin.json of each "./" entry)
  DIR     a plugin or marketplace folder: also every plugin folder a marketplace lists, in full
  SOURCE  a remote source (git:github.com/OWNER/REPO, https://…): fetched like an install, every
          entry fetched too; an entry that cannot be fetched is a warning

--json prints {ok, target{kind, mode, path, commit?}, errors[{entry?, file?, path, message}],
warnings[…], checked[{kind, entry?, name?, file?, note?}]}: path is the JSON field a finding is
about ("" for the whole document), file the document it is in when it is not the one given,
entry the marketplace entry ("plugins[3]") whose plugin it belongs to.

Exit status: 0 when there are no errors (warnings allowed), 1 when there are, 2 on usage errors.`,
		Example: `  reasonix plugin validate ./my-plugin
  reasonix plugin validate .claude-plugin/marketplace.json
  reasonix plugin validate https://github.com/OWNER/REPO --json`,
		Args: exactArgs(1, "a FILE, a DIR or a SOURCE to check"),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := m.validate(cmd.Context(), args[0])
			if err != nil {
				if m.asJSON {
					_ = writeJSON(m.Stdout, validation{Target: validationTarget{Path: plugind.RedactSecrets(args[0])},
						Errors:   []manifest.Finding{{Message: plugind.RedactSecrets(err.Error())}},
						Warnings: []manifest.Finding{}, Checked: []manifest.Checked{}})
					return errFailed
				}
				return fail(m.Stderr, err)
			}
			if m.asJSON {
				if err := writeJSON(m.Stdout, v); err != nil {
					return err
				}
			} else {
				printValidation(m.Stdout, v)
			}
			if !v.OK {
				return errFailed
			}
			return nil
		},
	}
	return cmd
}

// validate dispatches on what arg is: a file, a folder, or a source.
func (m *Main) validate(ctx context.Context, arg string) (*validation, error) {
	info, statErr := os.Stat(arg)
	var (
		v   *validation
		err error
	)
	switch {
	case statErr == nil && info.IsDir():
		v = validateDir(arg)
	case statErr == nil && info.Mode().IsRegular() && !strings.EqualFold(filepath.Ext(arg), ".zip"):
		v, err = validateFile(arg)
	case statErr == nil && !info.Mode().IsRegular():
		// A named pipe or a device (or a link to one) is never opened.
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s is %s, not a file or folder: not read", arg, plugind.DescribeType(info.Mode()))
	default:
		v, err = m.validateSource(ctx, arg, statErr)
	}
	if err != nil {
		return nil, err
	}
	v.finish()
	return v, nil
}

func (v *validation) add(r manifest.Report) {
	v.Errors = append(v.Errors, r.Errors...)
	v.Warnings = append(v.Warnings, r.Warnings...)
	v.Checked = append(v.Checked, r.Checked...)
}

// finish fixes the verdict and masks credentials in everything quoted
// from the documents (a source URL may carry a token).
func (v *validation) finish() {
	redact := func(fs []manifest.Finding) []manifest.Finding {
		out := make([]manifest.Finding, 0, len(fs))
		for _, f := range fs {
			f.Message = plugind.RedactSecrets(f.Message)
			f.Path = plugind.RedactSecrets(f.Path)
			out = append(out, f)
		}
		return out
	}
	v.Errors, v.Warnings = redact(v.Errors), redact(v.Warnings)
	if v.Checked == nil {
		v.Checked = []manifest.Checked{}
	}
	v.Target.Path = plugind.RedactSecrets(v.Target.Path)
	v.OK = len(v.Errors) == 0
}

// validateFile checks one document: its kind comes from its name, as
// Claude Code decides it (plugin.json, marketplace.json, a file in
// .claude-plugin/), else from its content (a "plugins" array makes a
// marketplace).
func validateFile(p string) (*validation, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	base, dir := filepath.Base(abs), filepath.Base(filepath.Dir(abs))
	v := &validation{Target: validationTarget{Mode: "file", Path: p}}
	kind := ""
	switch {
	case base == manifest.NativeManifest:
		kind = "native"
	case base == "plugin.json" && dir == ".codex-plugin":
		kind = "codex"
	case base == "plugin.json":
		kind = "plugin"
	case base == "marketplace.json":
		kind = "marketplace"
	case dir == ".claude-plugin":
		kind = "plugin"
	default:
		kind = "plugin"
		if data, err := manifest.ReadFile(filepath.Dir(abs), base, manifest.MaxMarketplaceBytes); err == nil {
			var probe struct {
				Plugins json.RawMessage `json:"plugins"`
			}
			if json.Unmarshal(data, &probe) == nil && strings.HasPrefix(strings.TrimSpace(string(probe.Plugins)), "[") {
				kind = "marketplace"
			}
		}
	}
	if kind == "marketplace" {
		v.Target.Kind = "marketplace"
		r, _ := marketplace.ValidateLocal(abs, marketplace.ValidateOptions{})
		v.add(relativeTo(r, filepath.Base(abs), marketplace.MarketplaceRoot(abs), filepath.Dir(abs)))
		return v, nil
	}
	v.Target.Kind = "plugin"
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
		v.add(manifest.Report{Errors: []manifest.Finding{{Message: manifest.Unreadable(err)}}})
		return v, nil
	}
	var r manifest.Report
	r.Checked = append(r.Checked, manifest.Checked{Kind: "manifest", File: base})
	switch kind {
	case "plugin":
		r.Merge(manifest.CheckClaudeManifest(data, root), "", "")
		if dir == ".claude-plugin" {
			// Claude's validator also reads the folder's skills, agents,
			// commands and hooks.json when given .claude-plugin/plugin.json.
			r.Merge(manifest.CheckPluginContent(root), "", "")
		}
	case "native", "codex":
		k := manifest.KindReasonix
		if kind == "codex" {
			k = manifest.KindCodex
		}
		if _, err := manifest.Parse(k, data, root, manifest.LoadOptions{}); err != nil {
			r.Errorf("", "%v", err)
		}
	}
	v.add(r)
	return v, nil
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
	for i := range r.Errors {
		r.Errors[i].File = fix(r.Errors[i].File)
	}
	for i := range r.Warnings {
		r.Warnings[i].File = fix(r.Warnings[i].File)
	}
	for i := range r.Checked {
		if f := fix(r.Checked[i].File); f != "" {
			r.Checked[i].File = f
		} else {
			r.Checked[i].File = docBase
		}
	}
	return r
}

// validateDir checks a folder: a marketplace (Claude's, else Codex's) with
// every plugin folder it lists, else a plugin folder.
func validateDir(dir string) *validation {
	v := &validation{Target: validationTarget{Mode: "folder", Path: dir}}
	for _, rel := range []string{manifest.ClaudeMarketplace, manifest.CodexMarketplace} {
		doc := filepath.Join(dir, filepath.FromSlash(rel))
		if info, err := os.Stat(doc); err != nil || !info.Mode().IsRegular() {
			continue
		}
		v.Target.Kind = "marketplace"
		r, refs := marketplace.ValidateLocal(doc, marketplace.ValidateOptions{Deep: true})
		v.add(r)
		if rootPluginUnlisted(dir, refs) {
			// The folder is a plugin too, and no entry lists it.
			v.add(manifest.ValidatePluginDir(dir, manifest.ValidateOptions{}))
		}
		return v
	}
	v.Target.Kind = "plugin"
	v.add(manifest.ValidatePluginDir(dir, manifest.ValidateOptions{}))
	return v
}

// rootPluginUnlisted reports a plugin manifest at a marketplace's root
// that none of its entries points at.
func rootPluginUnlisted(dir string, refs []marketplace.Ref) bool {
	if _, _, err := manifest.Detect(dir); err != nil {
		return false
	}
	for _, ref := range refs {
		if ref.Local == "." {
			return false
		}
	}
	return true
}

// validateSource resolves a source the way install does and validates
// what it names. A marketplace's document and its relative entries are
// read from the fetched tree; its remote entries are then fetched too
// (one fetch per repository and commit, as in a bulk install), and one
// that cannot be is a warning.
func (m *Main) validateSource(ctx context.Context, arg string, statErr error) (*validation, error) {
	src, err := source.Parse(arg)
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
	a, err := m.open(ctx)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	offline := m.Getenv("REASONIX_OFFLINE") == "1"
	f, err := a.Resolver.Resolve(ctx, resolver.Request{Source: src, DocumentOnly: true, Offline: offline})
	if err != nil {
		return nil, err
	}
	v := &validation{Target: validationTarget{Mode: "source", Path: f.Source, Commit: f.Commit}}
	if f.Kind != resolver.KindMarketplace {
		if len(f.Candidates) != 1 || f.Candidates[0].Dir == "" {
			return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s resolved to no plugin folder", arg)
		}
		v.Target.Kind = "plugin"
		v.add(manifest.ValidatePluginDir(f.Candidates[0].Dir, manifest.ValidateOptions{}))
		return v, nil
	}
	v.Target.Kind = "marketplace"
	doc, err := marketplaceDocIn(a.Store, f)
	if err != nil {
		return nil, err
	}
	r, refs := marketplace.ValidateLocal(doc, marketplace.ValidateOptions{Deep: true})
	if f.Market != nil && f.Market.Repo == "" {
		// A local folder or zip: its remote entries are fetched too.
		v.Target.Commit = ""
	}
	fetched := m.fetchRemoteEntries(ctx, a, src, offline, refs)
	for i := range r.Checked {
		c := &r.Checked[i]
		if out, ok := fetched[c.Entry]; ok && c.Kind == "entry" {
			*c = out.checked
		}
	}
	v.add(r)
	keys := make([]string, 0, len(fetched))
	for k := range fetched {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return entryIndex(keys[i]) < entryIndex(keys[j]) })
	for _, k := range keys {
		out := fetched[k]
		v.Errors = append(v.Errors, out.report.Errors...)
		v.Warnings = append(v.Warnings, out.report.Warnings...)
	}
	return v, nil
}

func entryIndex(at string) int {
	var i int
	_, _ = fmt.Sscanf(at, "plugins[%d]", &i)
	return i
}

// marketplaceDocIn finds the marketplace document of a resolved
// marketplace source in the store snapshot it was read from.
func marketplaceDocIn(st interface {
	Path(string) (string, error)
}, f *resolver.Fetched) (string, error) {
	if f.Market != nil && f.Market.Repo == "" && len(f.Snapshots) == 0 {
		// A local folder: the source is the folder itself.
		for _, rel := range []string{manifest.ClaudeMarketplace, manifest.CodexMarketplace} {
			p := filepath.Join(f.Source, filepath.FromSlash(rel))
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	for _, digest := range f.Snapshots {
		dir, err := st.Path(digest)
		if err != nil {
			continue
		}
		for _, base := range []string{filepath.Join(dir, filepath.FromSlash(f.Subdir)), dir} {
			for _, rel := range []string{manifest.ClaudeMarketplace, manifest.CodexMarketplace} {
				p := filepath.Join(base, filepath.FromSlash(rel))
				if _, err := os.Stat(p); err == nil {
					return p, nil
				}
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
// folder. An entry that cannot be fetched — a repository or commit that
// does not exist, an unpinned entry, offline — is a warning: the document
// is what is being validated, and Claude Code's validator does not fetch.
func (m *Main) fetchRemoteEntries(ctx context.Context, a *app, src source.Source, offline bool, refs []marketplace.Ref) map[string]fetchedEntry {
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
	f, err := a.Resolver.Resolve(ctx, resolver.Request{Source: src, Names: names, Offline: offline})
	if err != nil {
		for _, n := range names {
			ref := byName[n]
			var r manifest.Report
			r.Warnings = append(r.Warnings, manifest.Finding{Entry: ref.At, Path: ref.At + ".source", Message: "not fetched: " + err.Error()})
			out[ref.At] = fetchedEntry{checked: manifest.Checked{Kind: "entry", Entry: ref.At, Name: n, Note: "not fetched: " + err.Error()}, report: r}
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
			r.Warnings = append(r.Warnings, manifest.Finding{Entry: ref.At, Path: ref.At + ".source", Message: "cannot be fetched, so its plugin was not checked: " + c.Err.Error()})
			out[ref.At] = fetchedEntry{checked: manifest.Checked{Kind: "entry", Entry: ref.At, Name: c.Name, Note: "not fetched: " + c.Err.Error()}, report: r}
		case c.Dir != "":
			r.Merge(manifest.ValidatePluginDir(c.Dir, manifest.ValidateOptions{Implied: c.Name, ContentAsWarnings: true}), ref.At, "")
			out[ref.At] = fetchedEntry{checked: manifest.Checked{Kind: "plugin", Entry: ref.At, Name: c.Name, File: c.Source}, report: r}
		}
	}
	return out
}

// printValidation writes the text form: every plugin- or marketplace-
// supplied string is escaped for the terminal.
func printValidation(w io.Writer, v *validation) {
	what := v.Target.Kind
	if what == "" {
		what = "plugin"
	}
	fmt.Fprintf(w, "Validating %s %s (%s)\n", what, safeText(v.Target.Path), v.Target.Mode)
	if v.Target.Commit != "" {
		fmt.Fprintf(w, "  at commit %s\n", safeText(v.Target.Commit))
	}
	section := func(mark, noun string, fs []manifest.Finding) {
		if len(fs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s %s:\n", mark, plural(len(fs), noun))
		for _, f := range fs {
			fmt.Fprintf(w, "  %s\n", findingLine(f))
		}
	}
	section("✗", "error", v.Errors)
	section("⚠", "warning", v.Warnings)
	counts := map[string]int{}
	var notes []string
	for _, c := range v.Checked {
		counts[c.Kind]++
		if c.Note != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", c.Entry, safeText(fmt.Sprintf("%q", c.Name)), safeText(c.Note)))
		}
	}
	var parts []string
	for _, k := range []string{"marketplace", "manifest", "plugin"} {
		if counts[k] > 0 {
			parts = append(parts, plural(counts[k], map[string]string{"marketplace": "marketplace", "manifest": "manifest", "plugin": "plugin folder"}[k]))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "\nChecked %s.\n", strings.Join(parts, ", "))
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "Not followed (%d):\n", len(notes))
		for i, n := range notes {
			if i == 20 {
				fmt.Fprintf(w, "  … and %d more (see --json)\n", len(notes)-20)
				break
			}
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	switch {
	case !v.OK:
		fmt.Fprintln(w, "\n✗ Validation failed")
	case len(v.Warnings) > 0:
		fmt.Fprintln(w, "\n✓ Validation passed with warnings")
	default:
		fmt.Fprintln(w, "\n✓ Validation passed")
	}
}

// findingLine is "[entry] [file] path: message", one line.
func findingLine(f manifest.Finding) string {
	var where []string
	if f.Entry != "" && !strings.HasPrefix(f.Path, f.Entry) {
		where = append(where, f.Entry)
	}
	if f.File != "" {
		where = append(where, f.File)
	}
	if f.Path != "" {
		where = append(where, f.Path)
	}
	prefix := ""
	if len(where) > 0 {
		prefix = strings.Join(where, " ") + ": "
	}
	return safeText(prefix) + safeLine(f.Message, 0)
}
