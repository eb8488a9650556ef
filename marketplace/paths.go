package marketplace

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/source"
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
	for _, r := range p {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return "", fmt.Errorf("%s %q contains whitespace or a control character", field, p)
		}
	}
	for _, seg := range strings.Split(strings.ReplaceAll(p, `\`, "/"), "/") {
		if seg == ".." {
			return "", fmt.Errorf("%s %q contains a \"..\" segment", field, p)
		}
	}
	clean, err := plugind.LocalPath(p)
	if err != nil {
		return "", fmt.Errorf("%s: %v", field, err)
	}
	return clean, nil
}

// schemeLike matches "https:", "github:", "git+ssh:" — two or more letters,
// so a drive letter ("C:") is not mistaken for one and stays a path error.
var schemeLike = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]+:`)

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

var shorthand = regexp.MustCompile(`^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$`)

// parseGitHubURL reads a repository URL of a url or git-subdir source:
// https://github.com/OWNER/REPO[.git], git@github.com:OWNER/REPO[.git],
// and, where Claude's schema allows it (git-subdir), OWNER/REPO. notGitHub
// is true when the URL is well away from GitHub (another host, or not a URL
// at all); err when it is a GitHub URL SPEC §5 refuses, tree URLs included.
func parseGitHubURL(raw string, allowShorthand bool) (r *source.Remote, notGitHub bool, err error) {
	u := raw
	switch {
	case strings.HasPrefix(u, "git@"):
		host, rest, ok := strings.Cut(strings.TrimPrefix(u, "git@"), ":")
		if !ok || !isGitHubHost(host) {
			return nil, true, nil
		}
		u = "https://github.com/" + rest
	case allowShorthand && shorthand.MatchString(u):
		u = "https://github.com/" + u
	}
	parsed, perr := url.Parse(u)
	if perr != nil || parsed.Scheme == "" || parsed.Host == "" {
		// Not parseable as an absolute URL: a GitHub one would still name
		// the host, which sends it to ParseRemote for a precise error.
		if !strings.Contains(strings.ToLower(u), "github.com") {
			return nil, true, nil
		}
	} else if !isGitHubHost(parsed.Hostname()) {
		return nil, true, nil
	}
	r, err = source.ParseRemote(u)
	if err != nil {
		return nil, false, err
	}
	if r.IsTree() {
		return nil, false, fmt.Errorf("%q is a tree URL; give the repository URL, with the subdirectory in \"path\" and the commit in \"sha\"", raw)
	}
	return r, false, nil
}

func isGitHubHost(h string) bool {
	switch strings.ToLower(h) {
	case "github.com", "www.github.com":
		return true
	}
	return false
}

// markDuplicates refuses every entry whose name another entry also uses.
// Names are compared case-insensitively: they become directory names, and
// "Foo" and "foo" collide on case-insensitive file systems.
func markDuplicates(entries []entryState) {
	byName := map[string][]int{}
	for i := range entries {
		if entries[i].named && entries[i].Name != "" {
			k := strings.ToLower(entries[i].Name)
			byName[k] = append(byName[k], i)
		}
	}
	for i := range entries {
		if !entries[i].named || entries[i].Name == "" {
			continue
		}
		idx := byName[strings.ToLower(entries[i].Name)]
		if len(idx) < 2 {
			continue
		}
		others := make([]string, 0, len(idx)-1)
		for _, j := range idx {
			if j == i {
				continue
			}
			if len(others) == 5 {
				others = append(others, fmt.Sprintf("and %d more", len(idx)-1-5))
				break
			}
			others = append(others, fmt.Sprintf("plugins[%d] %q", j, entries[j].Name))
		}
		s := &entries[i]
		msg := fmt.Sprintf("duplicate name: also used by %s (plugin names must be unique, compared case-insensitively)", strings.Join(others, ", "))
		if s.Status == StatusError {
			msg += "; also " + s.problem
		}
		s.Status, s.Code, s.problem = StatusError, plugind.CodeInvalidSource, msg
	}
}
