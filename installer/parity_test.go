package installer

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/source"
)

// TestInstallRefusesExactlyWhatValidateRefuses rebuilds every corpus
// marketplace (REASONIX_CORPUS) as the folder it was taken from — its
// documents and every plugin.json saved beside them, where SOURCE.txt says
// they were — and plans it beside `validate` of the same folder. For each
// entry whose folder is there, install must leave it out exactly when
// validate refuses it: an error Reasonix does not keep, or a warning that
// says Reasonix refuses (or skips) it. A marketplace install refuses as a
// whole exactly when validate refuses the document itself.
func TestInstallRefusesExactlyWhatValidateRefuses(t *testing.T) {
	t.Parallel()
	corpus := fakegithub.CorpusDir(t)
	repos, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	var checked atomic.Int64
	for _, repo := range repos {
		if !repo.IsDir() || strings.HasPrefix(repo.Name(), "_") {
			continue
		}
		tree, ok := rebuild(t, filepath.Join(corpus, repo.Name()))
		if !ok {
			continue
		}
		if _, _, err := manifest.Detect(tree); err == nil {
			// The root is a plugin too: install reads the plugin (SPEC §7),
			// validate both; the entries are not comparable one by one.
			continue
		}
		t.Run(repo.Name(), func(t *testing.T) {
			t.Parallel()
			n := compareMarketplace(t, tree)
			t.Logf("%d entries compared", n)
			checked.Add(int64(n))
		})
	}
	t.Cleanup(func() {
		if checked.Load() == 0 && !t.Failed() {
			t.Error("no corpus entry was compared")
		}
	})
}

// compareMarketplace plans and validates the marketplace folder tree and
// compares their verdicts entry by entry; it returns how many it compared.
func compareMarketplace(t *testing.T, tree string) int {
	env := newEnv(t)
	v, err := Validate(context.Background(), tree, ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found, _ := marketplace.Find(tree)
	_, refs := marketplace.ValidateLocal(filepath.Join(tree, found.Path), marketplace.ValidateOptions{})
	resp, planErr := env.install(Request{Source: mustSource(tree)}, Approval{DryRun: true})
	if refusesDocument(v) {
		if planErr == nil {
			t.Errorf("validate refuses the document, install plans it: %+v", v.Errors)
		}
		return 0
	}
	if resp == nil || len(resp.Actions) == 0 {
		// A plan whose every entry is refused is an error too, with its
		// actions: those are compared below.
		t.Fatalf("install refuses the marketplace, validate does not: %v", planErr)
	}
	actions := actionsByName(resp)
	names := map[string]int{}
	for _, ref := range refs {
		names[ref.Name]++
	}
	n := 0
	for _, ref := range refs {
		if ref.Name == "" || names[ref.Name] > 1 || ref.Local == "" && ref.Valid {
			continue // nameless, ambiguous, or not a folder of the marketplace
		}
		if ref.Local != "" {
			if info, err := os.Stat(filepath.Join(tree, filepath.FromSlash(ref.Local))); err != nil || !info.IsDir() {
				continue // its folder was not saved in the corpus
			}
		}
		a, ok := actions[ref.Name]
		if !ok {
			t.Errorf("%s %q: no action", ref.At, ref.Name)
			continue
		}
		installs := a.Status == ActionReady
		refuses := refusesEntry(v, ref.At)
		if installs == refuses {
			t.Errorf("%s %q: install %s (%s), validate refuses: %v %s", ref.At, ref.Name, a.Status, a.ErrorText(), refuses, findingsOf(v, ref.At))
		}
		n++
	}
	return n
}

// rebuild lays out the corpus folder dir as its repository had it, from
// SOURCE.txt ("path/in/repo -> saved/path"); ok is false when it holds no
// marketplace.
func rebuild(t *testing.T, dir string) (string, bool) {
	f, err := os.Open(filepath.Join(dir, "SOURCE.txt"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	tree := t.TempDir()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		orig, saved, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(saved)))
		if err != nil {
			continue
		}
		if _, isDoc := marketplace.DocumentAt(orig); isDoc {
			data = unreserved(data)
		}
		writeTree(t, tree, map[string]string{orig: string(data)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tree, marketplace.Has(tree)
}

// unreserved renames a marketplace that uses a name Claude Code reserves
// for github.com/anthropics: rebuilt from a local folder, it would be
// refused whole for its name (TestReservedNames pins that), and its
// entries would go unchecked.
func unreserved(data []byte) []byte {
	doc, _, err := jsondoc.Parse(data)
	if err != nil {
		return data
	}
	name := doc.Get("name")
	if name == nil || name.Kind != jsondoc.String || marketplace.CheckReservedName(name.Str, source.Source{Kind: source.LocalDir}) == nil {
		return data
	}
	doc.Put("name", jsondoc.Text("corpus-rebuilt"))
	return doc.Marshal()
}

func refusesDocument(v *Validation) bool {
	for _, f := range append(append([]manifest.Finding{}, v.Errors...), v.Warnings...) {
		top := f.Entry == "" && !strings.HasPrefix(f.Path, "plugins[") && (f.File == "" || strings.HasSuffix(f.File, "marketplace.json"))
		if top && (f.Refused != "" || f.Kept == "" && isError(v, f)) {
			return true
		}
	}
	return false
}

// refusesEntry says whether validate refuses the entry at (plugins[i]):
// an error of its own Reasonix does not keep, or a warning saying Reasonix
// refuses or skips it.
func refusesEntry(v *Validation, at string) bool {
	for _, f := range findings(v, at) {
		if f.Refused != "" || f.Kept == "" && isError(v, f) {
			return true
		}
	}
	return false
}

func findings(v *Validation, at string) []manifest.Finding {
	var out []manifest.Finding
	for _, f := range append(append([]manifest.Finding{}, v.Errors...), v.Warnings...) {
		if f.Entry == at || f.Path == at || strings.HasPrefix(f.Path, at+".") || strings.HasPrefix(f.Path, at+"[") {
			out = append(out, f)
		}
	}
	return out
}

func isError(v *Validation, f manifest.Finding) bool {
	for _, e := range v.Errors {
		if e == f {
			return true
		}
	}
	return false
}

func findingsOf(v *Validation, at string) string {
	var b strings.Builder
	for _, f := range findings(v, at) {
		b.WriteString("\n  ")
		b.WriteString(f.File + " " + f.Line())
		if f.Kept != "" {
			b.WriteString(" [kept: " + f.Kept + "]")
		}
		if f.Refused != "" {
			b.WriteString(" [refused: " + f.Refused + "]")
		}
	}
	return b.String()
}
