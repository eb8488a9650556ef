package tarball

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"reasonix.io/plugind"
)

// cleanName checks an archive entry name (or a hardlink target) and returns
// it as a clean slash path relative to the archive root; "." is the archive
// root itself. The specific checks come before plugind.LocalPath so the
// refusal says exactly what was wrong.
func cleanName(name string, isDir bool) (string, error) {
	switch {
	case name == "":
		return "", errors.New("the name is empty")
	case strings.IndexByte(name, 0) >= 0:
		return "", errors.New("the name contains a NUL byte")
	case strings.IndexByte(name, '\\') >= 0:
		return "", errors.New("the name contains a backslash")
	case name[0] == '/':
		return "", errors.New("the name is an absolute path")
	case len(name) >= 2 && name[1] == ':':
		return "", errors.New("the name starts with a drive letter")
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "", errors.New("the name contains a \"..\" segment")
		}
	}
	trimmed := name
	if isDir {
		trimmed = strings.TrimRight(name, "/")
		if trimmed == "" || trimmed == "." {
			return ".", nil
		}
	} else if strings.HasSuffix(name, "/") {
		return "", errors.New("a non-directory entry name ends in \"/\"")
	}
	clean, err := plugind.LocalPath(trimmed)
	if err != nil {
		return "", err
	}
	if clean == "." && !isDir {
		return "", errors.New("the name is not a local path to a file")
	}
	return clean, nil
}

// splitRoot splits a clean path into its first segment and the rest.
func splitRoot(p string) (root, rest string) {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
}

// foldKey maps s to a key that is equal for two strings exactly when
// strings.EqualFold would call them equal: every rune becomes the smallest
// member of its Unicode simple case-folding orbit. Plain ToLower misses
// pairs such as "ſ"/"s" or "K" (Kelvin sign)/"k".
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// The smallest member of an ASCII letter's orbit is its upper case.
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(minFold(r))
	}
	return b.String()
}

func minFold(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return m
}
