// Package manifest reads a plugin directory already on local disk — a
// native reasonix-plugin.json, a Codex .codex-plugin/plugin.json or a Claude
// .claude-plugin/plugin.json package — and reports what it is and what it
// contributes (SPEC §10). It never executes anything and never touches the
// network.
package manifest

import (
	"errors"
	"fmt"
	"io/fs"

	"reasonix.io/plugind"
)

// Kind is the manifest flavour; its value is the registry's manifestKind.
type Kind string

const (
	KindReasonix Kind = "reasonix"
	KindCodex    Kind = "codex"
	KindClaude   Kind = "claude"
)

// Compatibility says how much of a non-native package maps to Reasonix.
type Compatibility string

const (
	CompatFull    Compatibility = "full"
	CompatPartial Compatibility = "partial"
	CompatNone    Compatibility = "none"
)

// Manifest locations, in detection order: a package that ships several
// manifests is read through the most specific one.
const (
	NativeManifest = "reasonix-plugin.json"
	CodexManifest  = ".codex-plugin/plugin.json"
	ClaudeManifest = ".claude-plugin/plugin.json"
)

// ErrNoManifest is what Detect's error wraps when root has no manifest at all.
var ErrNoManifest = errors.New("no plugin manifest")

// manifestAt is a manifest kind and where it lives.
type manifestAt struct {
	kind Kind
	path string
}

var manifestOrder = []manifestAt{
	{KindReasonix, NativeManifest},
	{KindCodex, CodexManifest},
	{KindClaude, ClaudeManifest},
}

// Detect finds the manifest in root and returns its kind and slash path
// relative to root. A manifest that is a symlink leaving root does not
// count.
func Detect(root string) (Kind, string, error) {
	t, err := openTree(root)
	if err != nil {
		return "", "", err
	}
	return t.detect(root, "")
}

// detect is Detect in a tree already resolved, with prefer (Claude or
// Codex) tried right after the native manifest (SPEC §10: native; then the
// format of the marketplace the package came from; then the other).
func (t *tree) detect(root string, prefer Kind) (Kind, string, error) {
	order := manifestOrder
	if prefer == KindClaude {
		order = []manifestAt{manifestOrder[0], manifestOrder[2], manifestOrder[1]}
	}
	for _, m := range order {
		ok, err := t.regularFile(m.path)
		if err != nil {
			return "", "", coded(plugind.CodeInvalidSource, "%s: %w", m.path, err)
		}
		if ok {
			return m.kind, m.path, nil
		}
	}
	return "", "", &plugind.Error{Code: plugind.CodeInvalidSource, Err: ErrNoManifest,
		Msg: fmt.Sprintf("no plugin manifest in %s: looked for %s, %s and %s", root, NativeManifest, CodexManifest, ClaudeManifest)}
}

// IsFile reports whether rel (a slash path) names a regular file inside
// the folder root; a symbolic link leading out of root does not count.
func IsFile(root, rel string) bool {
	t, err := openTree(root)
	if err != nil {
		return false
	}
	ok, err := t.regularFile(rel)
	return ok && err == nil
}

// regularFile reports whether rel names a regular file inside the tree.
// Missing is (false, nil); a path that escapes is an error.
func (t *tree) regularFile(rel string) (bool, error) {
	_, real, err := t.resolve(rel)
	var info fs.FileInfo
	if err == nil {
		info, err = t.stat(real)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist): // errMissing matches it
		return false, nil
	case err != nil:
		return false, err
	}
	return info.Mode().IsRegular(), nil
}

// isDir reports whether rel names a directory inside the tree.
func (t *tree) isDir(rel string) bool {
	_, real, err := t.resolve(rel)
	if err != nil {
		return false
	}
	info, err := t.stat(real)
	return err == nil && info.IsDir()
}
