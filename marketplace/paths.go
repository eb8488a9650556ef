package marketplace

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/lazyregexp"
)

// cleanPath checks a path declared by the document and returns it cleaned.
// Beyond plugind.LocalPath it refuses a ".." segment even where cleaning
// would cancel it, and whitespace or control characters: every path ends
// up inside a pinned https://github.com/…/tree/SHA/PATH source, which may
// not contain them (SPEC §5).
func cleanPath(field, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%s is empty", field)
	}
	if strings.ContainsFunc(p, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return "", fmt.Errorf("%s %q contains whitespace or a control character", field, p)
	}
	if slices.Contains(strings.Split(strings.ReplaceAll(p, `\`, "/"), "/"), "..") {
		return "", fmt.Errorf("%s %q contains a \"..\" segment", field, p)
	}
	clean, err := plugind.LocalPath(p)
	if err != nil {
		return "", fmt.Errorf("%s: %v", field, err)
	}
	return clean, nil
}

// schemeLike matches "https:", "github:", "git+ssh:" — two or more letters,
// so a drive letter ("C:") is not mistaken for one and stays a path error.
var schemeLike = lazyregexp.New(`^[A-Za-z][A-Za-z0-9+.-]+:`)

// isExternal reports whether a string source names something outside the
// marketplace rather than a path in it.
func isExternal(s string) bool {
	return schemeLike.MatchString(s) || strings.HasPrefix(s, "git@")
}

// checkRef applies git's ref-name rules (git check-ref-format) that matter
// before a ref reaches git: nothing that reads as an option, a range, a
// revision expression or a path escape.
func checkRef(ref string) error {
	switch {
	case ref == "":
		return errors.New("is empty")
	case strings.HasPrefix(ref, "-"):
		return errors.New("starts with '-', which git would read as an option")
	case strings.Contains(ref, ".."):
		return errors.New("contains \"..\"")
	case strings.Contains(ref, "@{") || ref == "@":
		return errors.New("is a revision expression, not a branch or tag name")
	case strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/") || strings.Contains(ref, "//"):
		return errors.New("has an empty path component")
	case strings.HasSuffix(ref, ".") || strings.HasSuffix(ref, ".lock"):
		return errors.New("ends with '.' or \".lock\"")
	}
	for _, r := range ref {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return errors.New("contains whitespace or a control character")
		}
		if strings.ContainsRune("~^:?*[\\", r) {
			return fmt.Errorf("contains %q, which git does not allow in a ref name", r)
		}
	}
	for _, comp := range strings.Split(ref, "/") {
		if strings.HasPrefix(comp, ".") {
			return fmt.Errorf("has a component %q starting with '.'", comp)
		}
	}
	return nil
}
