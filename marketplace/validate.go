package marketplace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/manifest"
)

// This file is `reasonix plugin validate` for marketplace documents: the
// walk of their tables (tables.go) that Parse makes too, reporting Claude
// Code's verdict, with what Reasonix reads differently or refuses named.

// Ref is one entry as validation read it, for following its source.
type Ref struct {
	At   string // "plugins[3]"
	Name string
	// Local is the folder of a relative entry ("./x" cleaned to "x", "."
	// for the root) when the entry passed the checks; "" otherwise.
	Local   string
	Version string
	// Remote is true for url, github and git-subdir entries, whose folder
	// is in another repository.
	Remote bool
	// Valid reports that the entry has no error of its own.
	Valid bool
	// Manifest is what the entry says about its plugin, as install reads
	// it with the plugin's folder.
	Manifest *manifest.EntryManifest
}

// checkRefs checks a marketplace document of format f (the structure
// alone) and returns the entries it lists. A Codex document is judged by
// Reasonix's reading of it (Claude Code has no validator for this format):
// what install refuses is an error, what it skips a warning.
func checkRefs(data []byte, f format) (jsondoc.Report, []Ref) {
	m, r, _ := read(data, Options{}, f, jsondoc.Validate)
	if m == nil {
		return r, nil
	}
	_, perEntry := byEntry(r, len(m.Entries))
	refs := make([]Ref, len(m.Entries))
	for i := range m.Entries {
		e := &m.Entries[i]
		ref := Ref{At: jsondoc.Index("plugins", i), Name: e.Name, Version: e.Version,
			Valid: perEntry[i].OK(), Manifest: e.ManifestFor()}
		switch e.Kind {
		case KindURL, KindGitHub, KindGitSubdir:
			ref.Remote = true
		case KindRelative:
			if ref.Valid && e.Path != "" {
				ref.Local = e.Path
			}
		}
		refs[i] = ref
	}
	return r, refs
}

// ValidateOptions adjust ValidateLocal.
type ValidateOptions struct {
	// Deep validates each relative entry's folder in full
	// (manifest.ValidatePluginDir, with the entry): a folder or source was
	// given. Without it, as for a marketplace.json file, only what Claude
	// Code's validator reads is checked: the .claude-plugin/plugin.json of
	// each relative entry, where there is one.
	Deep bool
}

// ValidateLocal validates the marketplace document at docPath and follows
// its relative entries on disk (see ValidateOptions). Remote entries are
// checked as written and listed in Checked as not fetched; the caller may
// fetch them. Findings name their file relative to the marketplace root.
func ValidateLocal(docPath string, opts ValidateOptions) (jsondoc.Report, []Ref) {
	var r jsondoc.Report
	root, doc := RootOf(docPath)
	rel, err := filepath.Rel(root, docPath)
	if err != nil {
		rel = filepath.Base(docPath)
	}
	rel = filepath.ToSlash(rel)
	data, err := manifest.ReadFile(root, rel, MaxDocumentBytes)
	if err != nil {
		r.Errors = append(r.Errors, jsondoc.Finding{File: rel, Message: "the marketplace " + manifest.Unreadable(err)})
		return r, nil
	}
	r.Checked = append(r.Checked, jsondoc.Checked{Kind: "marketplace", File: rel})
	found, refs := checkRefs(data, doc.f)
	r.Merge(found, "", rel)
	for _, ref := range refs {
		followLocal(&r, root, ref, doc.Format, opts)
	}
	return r, refs
}

// followLocal checks what a relative entry points at.
func followLocal(r *jsondoc.Report, root string, ref Ref, format manifest.Kind, opts ValidateOptions) {
	name := ref.Name
	switch {
	case ref.Remote:
		r.Checked = append(r.Checked, jsondoc.Checked{Kind: "entry", Entry: ref.At, Name: name, Note: "remote entry: checked as written, not fetched"})
		return
	case ref.Local == "":
		if ref.Valid {
			r.Checked = append(r.Checked, jsondoc.Checked{Kind: "entry", Entry: ref.At, Name: name, Note: "not a folder of this marketplace"})
		}
		return
	}
	dir := filepath.Join(root, filepath.FromSlash(ref.Local))
	if escapes(root, dir) {
		r.Errors = append(r.Errors, jsondoc.Finding{Entry: ref.At, Path: ref.At + ".source", Message: fmt.Sprintf("folder %q leaves the marketplace folder through a symlink", "./"+ref.Local)})
		return
	}
	manifestFile := path.Join(ref.Local, manifest.ClaudeManifest)
	// Read as install reads it: confined to the entry's folder.
	data, err := manifest.ReadFile(dir, manifest.ClaudeManifest, manifest.MaxManifestBytes)
	if err == nil {
		crossCheckVersion(r, ref, manifestFile, data)
	}
	if !opts.Deep {
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return // Claude checks only a manifest that is there
		case err != nil:
			r.Errors = append(r.Errors, jsondoc.Finding{Entry: ref.At, File: manifestFile, Message: manifest.Unreadable(err)})
			return
		}
		r.Checked = append(r.Checked, jsondoc.Checked{Kind: "manifest", Entry: ref.At, Name: name, File: manifestFile})
		r.Merge(manifest.CheckClaudeManifest(data, dir), ref.At, manifestFile)
		return
	}
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		r.Errors = append(r.Errors, jsondoc.Finding{Entry: ref.At, Path: ref.At + ".source", Message: fmt.Sprintf("folder %q does not exist in the marketplace", "./"+ref.Local)})
		return
	}
	r.Checked = append(r.Checked, jsondoc.Checked{Kind: "plugin", Entry: ref.At, Name: name, File: ref.Local})
	r.Merge(manifest.ValidatePluginDir(dir, manifest.ValidateOptions{Implied: name, Entry: ref.Manifest, Prefer: format, ContentAsWarnings: true}), ref.At, ref.Local)
}

// escapes reports whether dir, symlinks resolved, leaves root (one that
// cannot be resolved, missing, is reported where it matters).
func escapes(root, dir string) bool {
	realRoot, rootErr := filepath.EvalSymlinks(root)
	realDir, dirErr := filepath.EvalSymlinks(dir)
	return rootErr == nil && dirErr == nil && !plugind.Within(realRoot, realDir)
}

// crossCheckVersion warns when an entry's version differs from its
// plugin.json's: the manifest's wins at install.
func crossCheckVersion(r *jsondoc.Report, ref Ref, manifestFile string, data []byte) {
	if ref.Version == "" {
		return
	}
	data, _ = jsondoc.TrimBOM(data)
	doc, _, err := jsondoc.Parse(data)
	if err != nil {
		r.Warnings = append(r.Warnings, jsondoc.Finding{Entry: ref.At, Path: ref.At + ".source", Message: fmt.Sprintf("cannot parse %s to compare versions: %v", manifestFile, err)})
		return
	}
	if v := doc.Get("version"); v != nil && v.Kind == jsondoc.String && v.Str != ref.Version {
		r.Warnings = append(r.Warnings, jsondoc.Finding{Entry: ref.At, Path: ref.At + ".version", Message: fmt.Sprintf("the entry says version %q but %s says %q; the plugin's own version wins at install, so update the entry", ref.Version, manifestFile, v.Str)})
	}
}
