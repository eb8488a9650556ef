package parity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"reasonix.io/plugind/manifest"
)

// A Skeleton stands in for a real repository in the corpus parity tests,
// which CI runs without the repositories: the files that decide a plugin's
// inventory, by name, with their content reduced to what decides it.
//   - a manifest the corpus holds verbatim (REASONIX_CORPUS/OWNER__NAME/,
//     see its SOURCE.txt) is referred to, not copied;
//   - a markdown file keeps only its front matter's name;
//   - any other JSON file keeps its structure, its keys and the strings
//     that are names (no whitespace, or under a name key); prose and
//     commands become "placeholder";
//   - a symbolic link keeps its target;
//   - a git submodule is listed (Submodules), not kept.
//
// bench/sidebyside skeletons writes them from the fetched repositories and
// checks that reasonix makes the same inventory of a skeleton as of its
// repository.
type Skeleton struct {
	About string `json:"about"`
	// Repo is OWNER/NAME; Commit the commit it was taken from; Head says
	// it was the repository's HEAD (served on its default branch); Refs the
	// branch or tag names entries give it (served pointing at it).
	Repo   string                  `json:"repo"`
	Commit string                  `json:"commit"`
	Head   bool                    `json:"head,omitempty"`
	Refs   []string                `json:"refs,omitempty"`
	Files  map[string]SkeletonFile `json:"files"`
	// Submodules are the git submodules in its plugin folders, by path.
	// A skeleton leaves them out (their content is another repository's,
	// which is not here), so the entries whose folder holds one are not
	// compared (SubmoduleOf).
	Submodules []string `json:"submodules,omitempty"`
}

// SkeletonFile is one file of a skeleton; at most one field is set, none
// for a markdown file without a front-matter name.
type SkeletonFile struct {
	Corpus  string          `json:"corpus,omitempty"`
	Name    string          `json:"name,omitempty"`
	JSON    json.RawMessage `json:"json,omitempty"`
	Symlink string          `json:"symlink,omitempty"`
	// Unparsable marks a JSON file that does not parse (its content is
	// replaced by text that does not parse either).
	Unparsable bool `json:"unparsable,omitempty"`
}

// SkeletonAbout is the about line every skeleton carries.
const SkeletonAbout = "names only: a stand-in for the repository in the corpus parity tests (internal/parity/skeleton.go); no content of the repository"

// placeholder replaces masked strings and stands for content.
const placeholder = "placeholder"

// Unparsable is the content a skeleton gives a JSON file that did not parse.
const unparsableJSON = "{ this file did not parse as JSON in the repository\n"

// MaterializedFile is a file of a materialized skeleton: its content, or
// the target of a symbolic link.
type MaterializedFile struct {
	Content string
	Symlink string
}

// Materialize turns a skeleton into files. corpus is the corpus folder of
// the repository's marketplace (REASONIX_CORPUS/OWNER__NAME), where files
// marked Corpus are read.
func (s *Skeleton) Materialize(corpus string) (map[string]MaterializedFile, error) {
	out := make(map[string]MaterializedFile, len(s.Files))
	for p := range s.Files {
		m, err := s.materialize(p, corpus)
		if err != nil {
			return nil, err
		}
		out[p] = m
	}
	return out, nil
}

// materialize is the file at p of the skeleton.
func (s *Skeleton) materialize(p, corpus string) (MaterializedFile, error) {
	f := s.Files[p]
	var m MaterializedFile
	switch {
	case f.Corpus != "":
		if !filepath.IsLocal(f.Corpus) {
			return m, fmt.Errorf("skeleton of %s: %s: corpus path %q leaves the corpus folder", s.Repo, p, f.Corpus)
		}
		data, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(f.Corpus)))
		if err != nil {
			return m, fmt.Errorf("skeleton of %s: %s: %w", s.Repo, p, err)
		}
		m.Content = string(data)
	case f.Symlink != "":
		m.Symlink = f.Symlink
	case f.Unparsable:
		m.Content = unparsableJSON
	case f.JSON != nil:
		m.Content = string(f.JSON) + "\n"
	case strings.HasSuffix(strings.ToLower(p), ".md"):
		m.Content = markdown(f.Name)
	default:
		m.Content = placeholder + "\n"
	}
	return m, nil
}

// ServedFile is the content of file p of the plugin a recorded source
// names (https://github.com/OWNER/REPO/tree/COMMIT[/PATH], COMMIT as
// served: served maps each skeleton's commit to its served one), as the
// skeletons serve it; nil when the skeleton has no such file. A symbolic
// link is followed.
func ServedFile(skeletons []*Skeleton, served map[string]string, corpus, source, p string) ([]byte, error) {
	rest, ok := strings.CutPrefix(source, "https://github.com/")
	if !ok {
		return nil, fmt.Errorf("served file: %q is not a GitHub tree URL", source)
	}
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) < 4 || parts[2] != "tree" {
		return nil, fmt.Errorf("served file: %q is not a GitHub tree URL", source)
	}
	repo, commit, folder := parts[0]+"/"+parts[1], parts[3], ""
	if len(parts) == 5 {
		folder = parts[4]
	}
	for _, sk := range skeletons {
		if sk.Repo != repo || (served[sk.Commit] != commit && sk.Commit != commit) {
			continue
		}
		name := path.Join(folder, p)
		for hops := 0; hops < 8; hops++ {
			if _, ok := sk.Files[name]; !ok {
				return nil, nil
			}
			m, err := sk.materialize(name, corpus)
			if err != nil || m.Symlink == "" {
				return []byte(m.Content), err
			}
			name = path.Join(path.Dir(name), m.Symlink)
		}
		return nil, fmt.Errorf("served file: %s of %s: too many links", p, source)
	}
	return nil, fmt.Errorf("served file: no skeleton of %s at %s", repo, commit)
}

func markdown(name string) string {
	if name == "" {
		return "---\ndescription: " + placeholder + "\n---\n\n" + placeholder + "\n"
	}
	return "---\nname: " + name + "\ndescription: " + placeholder + "\n---\n\n" + placeholder + "\n"
}

// MarkdownName is the name a markdown file's front matter gives, when it
// gives one on a line of its own ("" otherwise): all a skeleton keeps of it.
func MarkdownName(data []byte) string {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimPrefix(text, "\ufeff")
	if !strings.HasPrefix(text, "---\n") {
		return ""
	}
	head, _, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return ""
	}
	for _, line := range strings.Split(head, "\n") {
		v, ok := strings.CutPrefix(line, "name:")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if v == "" || strings.ContainsAny(v, "\n:#{}[]") {
			return ""
		}
		return v
	}
	return ""
}

// nameKeys are keys whose string values are kept even with whitespace:
// names a comparison looks at.
var nameKeys = map[string]bool{"name": true, "displayName": true}

// MaskJSON keeps a JSON document's structure, key order, duplicate keys,
// numbers, booleans and nulls, and the strings that are names: with no
// whitespace and at most 200 bytes, or under a name key. Every other
// string becomes "placeholder". ok is false when data does not parse.
func MaskJSON(data []byte) (masked json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var buf bytes.Buffer
	// Each open container, and how many tokens (keys and values) it holds
	// so far: in an object, an even count means a key comes next.
	type frame struct {
		object bool
		n      int
	}
	var stack []frame
	lastKey := ""
	values := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			buf.WriteByte(byte(d))
			stack = stack[:len(stack)-1]
			continue
		}
		isKey := false
		if top := len(stack) - 1; top >= 0 {
			f := &stack[top]
			switch {
			case f.object && f.n%2 == 0:
				isKey = true
				if f.n > 0 {
					buf.WriteByte(',')
				}
			case f.object:
				buf.WriteByte(':')
			case f.n > 0:
				buf.WriteByte(',')
			}
			f.n++
		} else if values++; values > 1 {
			return nil, false // two documents
		}
		switch v := tok.(type) {
		case json.Delim:
			buf.WriteByte(byte(v))
			stack = append(stack, frame{object: v == '{'})
		case string:
			switch {
			case isKey:
				lastKey = v
			case !keepString(lastKey, v):
				v = placeholder
			}
			writeJSONString(&buf, v)
		case json.Number:
			buf.WriteString(v.String())
		case bool:
			fmt.Fprint(&buf, v)
		case nil:
			buf.WriteString("null")
		}
	}
	if len(stack) > 0 || buf.Len() == 0 {
		return nil, false
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, false
	}
	return out.Bytes(), true
}

func keepString(key, v string) bool {
	if nameKeys[key] {
		return true
	}
	return len(v) <= 200 && strings.IndexFunc(v, unicode.IsSpace) < 0
}

func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// Marshal writes a skeleton as indented JSON (file names sorted).
func (s *Skeleton) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("skeleton of %s: %w", s.Repo, err)
	}
	return buf.Bytes(), nil
}

// ReadSkeletons reads every skeleton in dir (one marketplace's).
func ReadSkeletons(dir string) ([]*Skeleton, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read skeletons: %w", err)
	}
	var out []*Skeleton
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var s Skeleton
		if err := readStrict(filepath.Join(dir, e.Name()), &s); err != nil {
			return nil, fmt.Errorf("read skeleton: %w", err)
		}
		for p := range s.Files {
			if !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p {
				return nil, fmt.Errorf("skeleton %s: file %q is not a clean path inside the repository", e.Name(), p)
			}
		}
		out = append(out, &s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Repo+out[i].Commit < out[j].Repo+out[j].Commit })
	return out, nil
}

// SkeletonFileName names the skeleton of repo at commit.
func SkeletonFileName(repo, commit string) string {
	return strings.ReplaceAll(repo, "/", "__") + "@" + commit[:min(12, len(commit))] + ".json"
}

// RootIsPlugin reports whether repo's HEAD, as its skeleton stands for it,
// holds a plugin manifest at its root beside the marketplace document:
// then installing the repository installs that plugin (SPEC §7: the plugin
// wins), and the marketplace's entries are installed by name
// (NAME@MARKET), as Claude installs them.
func RootIsPlugin(skeletons []*Skeleton, repo string) bool {
	for _, s := range skeletons {
		if s.Repo != repo || !s.Head {
			continue
		}
		for _, m := range []string{manifest.NativeManifest, manifest.CodexManifest, manifest.ClaudeManifest} {
			if _, ok := s.Files[m]; ok {
				return true
			}
		}
	}
	return false
}

// SubmoduleOf names a git submodule in the folder of entry e of the
// marketplace repository market ("" when none): the entry's plugin is made
// of another repository's content too, which the skeletons do not hold.
func SubmoduleOf(skeletons []*Skeleton, market string, e Entry) string {
	repo, folder := e.Repo, "."
	switch e.Kind {
	case "relative":
		repo, folder = market, path.Clean(strings.TrimPrefix(e.Path, "./"))
	case "git-subdir":
		folder = path.Clean(strings.TrimPrefix(e.Path, "./"))
	}
	for _, s := range skeletons {
		if s.Repo != repo || (e.Kind == "relative" && !s.Head) {
			continue
		}
		for _, sub := range s.Submodules {
			if folder == "." || sub == folder || strings.HasPrefix(sub, folder+"/") || strings.HasPrefix(folder, sub+"/") {
				return s.Repo + ":" + sub
			}
		}
	}
	return ""
}
