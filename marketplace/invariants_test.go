package marketplace

import (
	"fmt"
	"reasonix.io/plugind/source"
	"reflect"
	"regexp"
	"strings"

	"reasonix.io/plugind"
)

// GitHub's own rules for what the resolver will be asked to fetch, kept
// apart from the parser's so the tests do not grade it by its own code.
var (
	githubOwner = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)
	githubRepo  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	fullSHA     = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// The checks below hold for every document whatever its content; the
// corpus tests, the synthetic fixtures and the fuzz targets all apply them.
// Each returns the first violation, naming the entry.

// docErrorInvariants checks a document-level error: coded invalid_source
// and naming the document it is about.
func docErrorInvariants(err error, codex bool) error {
	file := claudeFormat.file
	if codex {
		file = codexFormat.file
	}
	if code := plugind.CodeOf(err); code != plugind.CodeInvalidSource {
		return fmt.Errorf("document error coded %q, want %q: %v", code, plugind.CodeInvalidSource, err)
	}
	if !strings.HasPrefix(err.Error(), file+": ") {
		return fmt.Errorf("document error does not name %s: %v", file, err)
	}
	return nil
}

// invariants checks a parsed marketplace: counts add up, every entry is
// classified, ready entries carry everything the resolver needs and nothing
// unsafe, refused ones say why and with which code, and Select agrees with
// the classification.
func invariants(m *Marketplace, opts Options) error {
	ready, skipped, errored := m.Counts()
	if ready+skipped+errored != len(m.Entries) || len(m.Entries) > MaxEntries {
		return fmt.Errorf("counts %d/%d/%d for %d entries (limit %d)", ready, skipped, errored, len(m.Entries), MaxEntries)
	}
	if m.PluginRoot != "" {
		if err := cleanLocal(m.PluginRoot); err != nil || m.PluginRoot == "." {
			return fmt.Errorf("PluginRoot %q is not a clean path inside the marketplace: %v", m.PluginRoot, err)
		}
	}
	readyNames := map[string]int{}
	for i := range m.Entries {
		e := &m.Entries[i]
		var err error
		switch e.Status {
		case StatusReady:
			err = readyInvariants(e, opts)
			if err == nil {
				key := strings.ToLower(e.Name)
				if j, dup := readyNames[key]; dup {
					err = fmt.Errorf("ready, but plugins[%d] %q is ready under the same name", j, m.Entries[j].Name)
				}
				readyNames[key] = i
			}
		case StatusSkipped, StatusError:
			err = refusedInvariants(e, i)
		default:
			err = fmt.Errorf("status %q", e.Status)
		}
		if err == nil {
			err = selectInvariant(m, e)
		}
		if err != nil {
			return fmt.Errorf("plugins[%d] %q (%s %s): %w", i, e.Name, e.Kind, e.Status, err)
		}
	}
	return nil
}

func readyInvariants(e *Entry, opts Options) error {
	if e.Reason != "" || e.Code != "" || e.Err() != nil {
		return fmt.Errorf("reason %q, code %q", e.Reason, e.Code)
	}
	if err := plugind.ValidateName(e.Name); err != nil {
		return err
	}
	if e.SHA != "" && !fullSHA.MatchString(e.SHA) {
		return fmt.Errorf("sha %q is not a 40-hex commit", e.SHA)
	}
	if e.Ref != "" {
		if err := checkRef(e.Ref); err != nil {
			return fmt.Errorf("ref %q %v", e.Ref, err)
		}
	}
	switch e.Kind {
	case KindRelative:
		if e.Remote.Kind != 0 || e.SHA != "" || e.Ref != "" || e.Unpinned {
			return fmt.Errorf("a relative entry with a remote: %+v", *e)
		}
		if err := cleanLocal(e.Path); err != nil {
			return err
		}
	case KindURL, KindGitHub, KindGitSubdir:
		if err := checkRemote(e.Remote); err != nil {
			return err
		}
		if e.Path != "" {
			if err := cleanLocal(e.Path); err != nil || e.Path == "." {
				return fmt.Errorf("subdirectory %q is not a clean path below the repository root: %v", e.Path, err)
			}
		}
		switch {
		case e.Kind == KindGitSubdir && e.Unpinned:
			return fmt.Errorf("a git-subdir entry marked unpinned")
		case e.Kind != KindGitSubdir && (e.SHA == "") != e.Unpinned:
			return fmt.Errorf("sha %q with unpinned=%v", e.SHA, e.Unpinned)
		case e.Unpinned && !opts.AllowUnpinned:
			return fmt.Errorf("unpinned without AllowUnpinned")
		}
	default:
		return fmt.Errorf("ready with kind %q", e.Kind)
	}
	return nil
}

// cleanLocal holds for a path that stays inside its root, already in the
// clean slash form every consumer of Entry.Path expects.
func cleanLocal(p string) error {
	clean, err := plugind.LocalPath(p)
	switch {
	case err != nil:
		return fmt.Errorf("path %q: %v", p, err)
	case clean != p:
		return fmt.Errorf("path %q is not clean (%q)", p, clean)
	}
	for _, r := range p {
		if r <= ' ' || r == 0x7f {
			return fmt.Errorf("path %q holds whitespace or a control character", p)
		}
	}
	return nil
}

func refusedInvariants(e *Entry, i int) error {
	label := fmt.Sprintf("plugins[%d]", i)
	switch {
	case !strings.HasPrefix(e.Reason, "marketplace entry "):
		return fmt.Errorf("reason %q does not start with %q", e.Reason, "marketplace entry ")
	case !strings.Contains(e.Reason, label):
		return fmt.Errorf("reason %q does not name %s", e.Reason, label)
	case e.Code != plugind.CodeInvalidSource && e.Code != plugind.CodeNotPinnable:
		return fmt.Errorf("code %q", e.Code)
	case e.Status == StatusError && e.Code != plugind.CodeInvalidSource:
		return fmt.Errorf("an error coded %q", e.Code)
	case plugind.CodeOf(e.Err()) != e.Code || e.Err().Error() != e.Reason:
		return fmt.Errorf("Err() = %v, want %s %q", e.Err(), e.Code, e.Reason)
	case e.Unpinned:
		return fmt.Errorf("refused and marked unpinned")
	}
	return nil
}

// selectInvariant: --name selects exactly the ready entries, as a copy, and
// refuses the others with their own code.
func selectInvariant(m *Marketplace, e *Entry) error {
	if e.Name == "" {
		return nil
	}
	got, err := m.Select(e.Name)
	if e.Status == StatusReady {
		if err != nil || got == nil || !reflect.DeepEqual(*got, *e) {
			return fmt.Errorf("Select = %+v, %v; want the entry itself", got, err)
		}
		return nil
	}
	first := firstNamed(m, e.Name)
	if err == nil || got != nil || plugind.CodeOf(err) != first.Code || !strings.Contains(err.Error(), first.Reason) {
		return fmt.Errorf("Select = %+v, %v; want its %s refusal %q", got, err, first.Code, first.Reason)
	}
	return nil
}

func firstNamed(m *Marketplace, name string) *Entry {
	for i := range m.Entries {
		if m.Entries[i].Name == name {
			return &m.Entries[i]
		}
	}
	return nil
}

// unpinnedOnlyAdds compares a document parsed without (m) and with (mu)
// AllowUnpinned: the flag only turns unpinned url/github entries from
// skipped to ready-and-unpinned; everything else is identical.
func unpinnedOnlyAdds(m, mu *Marketplace) error {
	if m.Name != mu.Name || m.Description != mu.Description || m.PluginRoot != mu.PluginRoot ||
		!reflect.DeepEqual(m.Warnings, mu.Warnings) || len(m.Entries) != len(mu.Entries) {
		return fmt.Errorf("AllowUnpinned changed the document: %+v vs %+v", m, mu)
	}
	for i := range m.Entries {
		e, eu := m.Entries[i], mu.Entries[i]
		if !eu.Unpinned {
			if !reflect.DeepEqual(e, eu) {
				return fmt.Errorf("plugins[%d]: AllowUnpinned changed %+v into %+v", i, e, eu)
			}
			continue
		}
		if eu.Status != StatusReady || e.Status != StatusSkipped || e.Code != plugind.CodeNotPinnable || (e.Kind != KindURL && e.Kind != KindGitHub) || e.SHA != "" {
			return fmt.Errorf("plugins[%d]: AllowUnpinned turned %+v into %+v", i, e, eu)
		}
		e.Status, e.Reason, e.Code, e.Unpinned = StatusReady, "", "", true
		if !reflect.DeepEqual(e, eu) {
			return fmt.Errorf("plugins[%d]: unpinned %+v differs from %+v beyond its status", i, eu, e)
		}
	}
	return nil
}

// checkRemote holds for the repository of every url, github and git-subdir
// entry: a remote source whose canonical form parses back to itself, with
// a GitHub owner/repo on GitHub and clean path segments elsewhere.
func checkRemote(r source.Source) error {
	if !r.IsRemote() {
		return fmt.Errorf("no repository: %+v", r)
	}
	if r.Kind == source.GitHub {
		if !githubOwner.MatchString(r.Owner()) || !githubRepo.MatchString(r.Name()) || r.Name() == "." || r.Name() == ".." {
			return fmt.Errorf("owner/repo %q/%q is not a GitHub repository name", r.Owner(), r.Name())
		}
	}
	for _, seg := range strings.Split(r.Key(), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("repository %q has a bad path segment", r.Key())
		}
	}
	if r.Ref != "" || r.Subdir != "" {
		return fmt.Errorf("repository %q carries a ref or folder of its own", r.Key())
	}
	return nil
}
