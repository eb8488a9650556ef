// Package source is the grammar of remote plugin sources (SPEC §5): GitHub
// repository and tree URLs, parsed and refused before any network.
package source

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"reasonix.io/plugind"
)

// Remote is a parsed GitHub source (SPEC §5). A tree URL's REF may contain
// '/', so its REF and PATH are only split once the remote's refs are known:
// TreeRest keeps the raw segments until then.
type Remote struct {
	Owner    string
	Repo     string
	TreeRest string // segments after /tree/ ("release/v2/plugins/x"); "" for a plain repo
	// Ref and Path are set for plain repos (Ref "" = the default branch) and
	// once SplitTree has run.
	Ref  string
	Path string
}

// FullName is "owner/repo".
func (r *Remote) FullName() string { return r.Owner + "/" + r.Repo }

// IsTree reports whether the source named a tree (a ref and maybe a path).
func (r *Remote) IsTree() bool { return r.TreeRest != "" }

var (
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)
	repoPattern  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	hexSHA       = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// IsSHA reports whether s is a full 40-hex commit id.
func IsSHA(s string) bool { return hexSHA.MatchString(s) }

// ParseRemote parses git:github.com/OWNER/REPO[.git],
// https://github.com/OWNER/REPO[.git] and
// https://github.com/OWNER/REPO/tree/REF[/PATH], refusing everything SPEC §5
// lists before any network is touched.
func ParseRemote(src string) (*Remote, error) {
	bad := func(format string, args ...any) error {
		return plugind.Errorf(plugind.CodeInvalidSource, "source %q: %s", src, fmt.Sprintf(format, args...))
	}
	for _, r := range src {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return nil, bad("contains whitespace or a control character")
		}
	}
	var rawPath string
	switch {
	case strings.HasPrefix(src, "git:"):
		rest := strings.TrimPrefix(src, "git:")
		rest = strings.TrimPrefix(rest, "//")
		host, p, _ := strings.Cut(rest, "/")
		if err := checkHost(host); err != nil {
			return nil, bad("%v", err)
		}
		if strings.ContainsAny(p, "?#") {
			return nil, bad("queries and fragments are not allowed")
		}
		rawPath = p
		segs := strings.Split(rawPath, "/")
		if len(segs) != 2 {
			return nil, bad("expected git:github.com/OWNER/REPO")
		}
	case strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "http://"):
		u, err := url.Parse(src)
		if err != nil {
			return nil, bad("not a valid URL: %v", err)
		}
		if u.Scheme != "https" {
			return nil, bad("only https:// GitHub URLs are accepted")
		}
		if u.User != nil {
			return nil, bad("credentials (userinfo) in the URL are not allowed; use GITHUB_TOKEN")
		}
		if u.Port() != "" {
			return nil, bad("a port is not allowed")
		}
		if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(src, "?#") {
			return nil, bad("queries and fragments are not allowed")
		}
		if err := checkHost(u.Hostname()); err != nil {
			return nil, bad("%v", err)
		}
		rawPath = strings.TrimPrefix(u.EscapedPath(), "/")
		rawPath = strings.TrimSuffix(rawPath, "/") // a pasted trailing slash
	default:
		return nil, bad("not a recognised source: use a local folder, a .zip, git:github.com/OWNER/REPO, or https://github.com/OWNER/REPO[/tree/REF/PATH]")
	}
	lower := strings.ToLower(rawPath)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(rawPath, `\`) {
		return nil, bad("encoded '/' or '\\' is not allowed")
	}
	decoded, err := url.PathUnescape(rawPath)
	if err != nil {
		return nil, bad("bad percent-encoding: %v", err)
	}
	for _, r := range decoded {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return nil, bad("contains whitespace or a control character")
		}
	}
	segs := strings.Split(decoded, "/")
	for _, s := range segs {
		switch s {
		case "":
			return nil, bad("empty path segment")
		case ".", "..":
			return nil, bad("'.' and '..' segments are not allowed")
		}
	}
	if len(segs) < 2 {
		return nil, bad("expected https://github.com/OWNER/REPO")
	}
	r := &Remote{Owner: segs[0], Repo: strings.TrimSuffix(segs[1], ".git")}
	if !ownerPattern.MatchString(r.Owner) {
		return nil, bad("%q is not a valid GitHub owner name", r.Owner)
	}
	if !repoPattern.MatchString(r.Repo) || r.Repo == "." || r.Repo == ".." {
		return nil, bad("%q is not a valid GitHub repository name", r.Repo)
	}
	switch {
	case len(segs) == 2:
		return r, nil
	case segs[2] == "tree" && len(segs) >= 4 && !strings.HasSuffix(segs[1], ".git"):
		r.TreeRest = strings.Join(segs[3:], "/")
		if strings.HasPrefix(r.TreeRest, "-") {
			return nil, bad("a ref may not start with '-'")
		}
		return r, nil
	default:
		return nil, bad("/%s/ is not a repository or a tree URL (blob, issue and pull-request pages cannot be installed)", segs[2])
	}
}

func checkHost(host string) error {
	switch strings.ToLower(host) {
	case "github.com", "www.github.com":
		return nil
	case "":
		return fmt.Errorf("no host")
	}
	return fmt.Errorf("host %q is not github.com; only GitHub sources are supported", host)
}

// SplitTree splits TreeRest into REF and PATH against the refs the remote
// advertises: the longest ref that is a whole-segment prefix wins; a 40-hex
// first segment is a commit. With no refs known, the first segment is the
// ref.
func (r *Remote) SplitTree(refs []string) {
	if !r.IsTree() {
		return
	}
	segs := strings.Split(r.TreeRest, "/")
	best := 0
	known := map[string]bool{}
	for _, ref := range refs {
		known[ref] = true
	}
	if !IsSHA(segs[0]) {
		for i := len(segs); i >= 1; i-- {
			if known[strings.Join(segs[:i], "/")] {
				best = i
				break
			}
		}
	}
	if best == 0 {
		best = 1
	}
	r.Ref = strings.Join(segs[:best], "/")
	r.Path = strings.Join(segs[best:], "/")
}

// String is the canonical spelling of the remote as a source.
func (r *Remote) String() string {
	if !r.IsTree() {
		return "https://github.com/" + r.FullName()
	}
	return "https://github.com/" + r.FullName() + "/tree/" + r.TreeRest
}

// PinnedSource is the recorded source of a tree at a commit (SPEC §7).
func PinnedSource(owner, repo, sha, path string) string {
	s := "https://github.com/" + owner + "/" + repo + "/tree/" + sha
	if path != "" {
		s += "/" + path
	}
	return s
}
