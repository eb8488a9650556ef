package source

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/secrets"
)

// Parse is the one detection step from a string to a typed Source. The
// detectors run in order and the first that recognises the string decides
// (go-getter style):
//
//  1. empty, whitespace or control characters: refused;
//  2. "git:github.com/OWNER/REPO": GitHub;
//  3. anything with a scheme ("x://"): https, GitHub forms on github.com,
//     HOST/PATH.git[#REF] elsewhere; ssh://[USER@]HOST[:PORT]/PATH[#REF]
//     (ssh.go); every other transport refused;
//  4. remote-helper ("ext::…") spellings refused; scp-like ones
//     ("git@host:o/r[#REF]") read as SSH (ssh.go); shorthands such as
//     "gh:o/r" refused with the form to use instead;
//  5. NAME@MARKET: a marketplace entry (a local folder of that name is
//     written "./NAME@MARKET");
//  6. everything else is a local path: a .zip archive or a folder.
//
// Errors carry plugind.CodeInvalidSource and never repeat a credential the
// string held.
func Parse(raw string) (Source, error) {
	bad := func(format string, args ...any) error {
		return invalid(raw, format, args...)
	}
	if strings.TrimSpace(raw) == "" {
		return Source{}, ErrEmpty()
	}
	if hasSpaceOrControl(raw) {
		return Source{}, bad("contains whitespace or a control character")
	}
	lower := strings.ToLower(raw[:min(len(raw), len("git://"))])
	switch {
	case strings.HasPrefix(lower, "git://"):
		return Source{}, bad("the git:// transport is not allowed (it is unauthenticated and unencrypted); use https://")
	case strings.HasPrefix(lower, "git:"):
		return parseGitScheme(raw)
	case schemeRE.MatchString(raw):
		return parseURL(raw)
	case strings.Contains(raw, "::"):
		return Source{}, bad("remote-helper transports (such as ext::) are not allowed; use https://")
	}
	if m := scpRE.FindStringSubmatch(raw); m != nil {
		return parseSCP(raw, m[1], m[2], m[3])
	}
	if m := shorthandRE.FindStringSubmatch(raw); m != nil {
		return Source{}, bad("%q is not a source prefix; did you mean git:github.com/%s?", m[1]+":", m[2])
	}
	if m := entryRE.FindStringSubmatch(raw); m != nil {
		return Source{Kind: MarketEntry, Entry: m[1], Market: m[2]}, nil
	}
	return Local(raw), nil
}

var (
	schemeRE    = lazyregexp.New(`^[A-Za-z][A-Za-z0-9+.-]*://`)
	scpRE       = lazyregexp.New(`^(?:([^@/]+)@)?([A-Za-z0-9.-]+\.[A-Za-z]{2,}):(?:/*)([^/].*)$`)
	shorthandRE = lazyregexp.New(`^(?i)(gh|github|gitlab|bitbucket):/*([A-Za-z0-9._-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?$`)
	entryRE     = lazyregexp.New(`^([A-Za-z0-9][A-Za-z0-9._-]*)@([A-Za-z0-9][A-Za-z0-9._-]*)$`)

	segmentRE = lazyregexp.New(`^[A-Za-z0-9._~+-]+$`)
)

const asciiAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// validOwner is GitHub's rule for an owner's name: letters and digits,
// single hyphens between them, at most 39 letters and digits. Written
// out, not a regular expression: a registry's every source is read by it.
func validOwner(s string) bool {
	alnum := 0
	for i := 0; i < len(s); i++ {
		switch {
		case strings.IndexByte(asciiAlnum, s[i]) >= 0:
			alnum++
		case s[i] != '-' || i == 0 || i+1 == len(s) || s[i+1] == '-':
			return false
		}
	}
	return alnum >= 1 && alnum <= 39
}

// hasSpaceOrControl reports whether s holds what no source may: white
// space or a control character. Its ASCII, most of every source, is judged
// a byte at a time (a registry re-reads thousands of sources).
func hasSpaceOrControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf {
			return strings.ContainsFunc(s[i:], func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
		} else if c <= ' ' || c == 0x7f {
			return true
		}
	}
	return false
}

func invalid(raw, format string, args ...any) error {
	return plugind.Errorf(plugind.CodeInvalidSource, "source %q: %s", secrets.Mask(raw), secrets.MaskQuoting(fmt.Sprintf(format, args...), raw))
}

func isGitHubHost(h string) bool {
	return slices.Contains([]string{"github.com", "www.github.com"}, strings.ToLower(h))
}

// parseGitScheme reads git:github.com/OWNER/REPO[.git].
func parseGitScheme(raw string) (Source, error) {
	rest := raw[len("git:"):]
	host, p, _ := strings.Cut(rest, "/")
	if !isGitHubHost(host) {
		if host == "" {
			return Source{}, invalid(raw, "expected git:github.com/OWNER/REPO")
		}
		return Source{}, invalid(raw, "git: sources name GitHub repositories (git:github.com/OWNER/REPO); for %s use https://%s/PATH.git", host, strings.ToLower(host))
	}
	if strings.ContainsAny(p, "?#") {
		return Source{}, invalid(raw, "queries and fragments are not allowed")
	}
	segs := strings.Split(p, "/")
	if len(segs) != 2 {
		return Source{}, invalid(raw, "expected git:github.com/OWNER/REPO")
	}
	return gitHubRepo(raw, segs[0], segs[1], formGitScheme)
}

// parseURL reads an https:// source on GitHub or any other host, or an
// ssh:// one (parseSSHURL).
func parseURL(raw string) (Source, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Source{}, invalid(raw, "not a valid URL: %v", StripURLError(err))
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "https":
	case "ssh":
		return parseSSHURL(raw, u)
	case "http":
		return Source{}, invalid(raw, "only https:// is allowed (plain http is unencrypted)")
	default:
		return Source{}, invalid(raw, "the %s:// transport is not allowed; use https:// or ssh://", scheme)
	}
	if u.User != nil {
		return Source{}, invalid(raw, "credentials (userinfo) in the URL are not allowed; use GITHUB_TOKEN for GitHub, a git credential helper or ~/.netrc for other hosts")
	}
	if u.Port() != "" {
		return Source{}, invalid(raw, "a port is not allowed")
	}
	if u.RawQuery != "" || u.ForceQuery {
		return Source{}, invalid(raw, "queries are not allowed")
	}
	host, err := NormalizeHost(u.Hostname())
	if err != nil {
		return Source{}, invalid(raw, "%v", err)
	}
	if isGitHubHost(host) {
		if u.Fragment != "" || strings.Contains(raw, "#") {
			return Source{}, invalid(raw, "fragments are not allowed in GitHub URLs; name a ref with https://github.com/OWNER/REPO/tree/REF")
		}
		return parseGitHubPath(raw, u.EscapedPath())
	}
	segs, err := pathSegments(raw, u.EscapedPath())
	if err != nil {
		return Source{}, err
	}
	if last := segs[len(segs)-1]; !strings.HasSuffix(last, ".git") || last == ".git" || last == "..git" || last == "...git" {
		return Source{}, invalid(raw, "a repository on %s is written https://%s/PATH.git (with .git), optionally #REF", host, host)
	}
	for _, seg := range segs {
		if err := CheckSegment(seg); err != nil {
			return Source{}, invalid(raw, "path %v", err)
		}
	}
	s := Source{Kind: Git, Host: host, RepoPath: strings.Join(segs, "/"), form: formRepo}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		if err := CheckRef(u.Fragment); err != nil {
			return Source{}, invalid(raw, "the #REF %v", err)
		}
		s.Ref = u.Fragment
	}
	return s, nil
}

// StripURLError drops url.Error's echo of the whole URL, which may hold a
// credential (and, in a transport error, is long and says nothing the
// message does not).
func StripURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// pathSegments validates an escaped URL path and returns its decoded
// segments: no encoded separators, no empty, "." or ".." segments, only
// characters git hosts use in repository paths, nothing that starts like an
// option.
func pathSegments(raw, escaped string) ([]string, error) {
	lowerEsc := strings.ToLower(escaped)
	if strings.Contains(lowerEsc, "%2f") || strings.Contains(lowerEsc, "%5c") || strings.Contains(escaped, `\`) {
		return nil, invalid(raw, "encoded '/' or '\\' is not allowed")
	}
	p := strings.TrimSuffix(strings.TrimPrefix(escaped, "/"), "/") // a pasted trailing slash
	decoded, err := url.PathUnescape(p)
	if err != nil {
		return nil, invalid(raw, "bad percent-encoding: %v", err)
	}
	if hasSpaceOrControl(decoded) {
		return nil, invalid(raw, "contains whitespace or a control character")
	}
	if decoded == "" {
		return nil, invalid(raw, "no repository path")
	}
	segs := strings.Split(decoded, "/")
	for _, s := range segs {
		switch {
		case s == "":
			return nil, invalid(raw, "empty path segment")
		case s == "." || s == "..":
			return nil, invalid(raw, "'.' and '..' segments are not allowed")
		}
	}
	return segs, nil
}

// parseGitHubPath reads /OWNER/REPO[.git] and /OWNER/REPO/tree/REF[/PATH].
func parseGitHubPath(raw, escaped string) (Source, error) {
	segs, err := pathSegments(raw, escaped)
	if err != nil {
		return Source{}, err
	}
	if len(segs) < 2 {
		return Source{}, invalid(raw, "expected https://github.com/OWNER/REPO")
	}
	s, err := gitHubRepo(raw, segs[0], segs[1], formRepo)
	if err != nil {
		return Source{}, err
	}
	switch {
	case len(segs) == 2:
		return s, nil
	case segs[2] == "tree" && len(segs) >= 4 && !strings.HasSuffix(segs[1], ".git"):
		s.form = formTree
		s.tree = strings.Join(segs[3:], "/")
		if strings.HasPrefix(s.tree, "-") {
			return Source{}, invalid(raw, "a ref may not start with '-'")
		}
		if len(segs) == 4 || IsSHA(segs[3]) {
			// One segment, or a commit first: nothing to disambiguate.
			return s.Split(nil), nil
		}
		return s, nil
	}
	return Source{}, invalid(raw, "/%s/ is not a repository or a tree URL (blob, issue and pull-request pages cannot be installed)", segs[2])
}

func gitHubRepo(raw, owner, repo string, f form) (Source, error) {
	name := strings.TrimSuffix(repo, ".git")
	if !validOwner(owner) {
		return Source{}, invalid(raw, "%q is not a valid GitHub owner name", owner)
	}
	if len(name) > 100 || strings.Trim(name, asciiAlnum+"._-") != "" || name == "" || name == "." || name == ".." {
		return Source{}, invalid(raw, "%q is not a valid GitHub repository name", name)
	}
	return Source{Kind: GitHub, Host: GitHubHost, RepoPath: owner + "/" + name, form: f}, nil
}

// GitHubRepo reads "OWNER/REPO", a marketplace "github" entry's repo (the
// marketplace checks it holds one '/'; REPO's name rule refuses a second).
func GitHubRepo(ownerRepo string) (Source, error) {
	owner, repo, _ := strings.Cut(ownerRepo, "/")
	return gitHubRepo(ownerRepo, owner, repo, formRepo)
}

// ParseRepoURL reads the repository URL of a marketplace "url" or
// "git-subdir" entry: https://HOST/PATH[.git] on any host (".git" optional,
// as Claude Code accepts), the SSH spellings git@HOST:PATH and
// ssh://[USER@]HOST[:PORT]/PATH (ssh.go: on github.com, the GitHub source),
// and, with shorthand (git-subdir), OWNER/REPO on GitHub.
// GitHub tree URLs are refused: an entry names its folder and commit in
// "path" and "sha".
func ParseRepoURL(raw string, shorthand bool) (Source, error) {
	const noFragment = "fragments are not allowed here; give the commit in \"sha\" and the ref in \"ref\""
	u := raw
	if m := scpRE.FindStringSubmatch(raw); m != nil {
		if strings.Contains(m[3], "#") {
			return Source{}, invalid(raw, noFragment)
		}
		return parseSCP(raw, m[1], m[2], m[3])
	} else if shorthand && repoShorthandRE.MatchString(raw) {
		u = "https://github.com/" + raw
	}
	if !schemeRE.MatchString(u) {
		return Source{}, invalid(raw, "not a repository URL (expected https://HOST/PATH)")
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return Source{}, invalid(raw, "not a valid URL: %v", StripURLError(err))
	}
	if parsed.Fragment != "" || strings.Contains(u, "#") {
		return Source{}, invalid(raw, noFragment)
	}
	if strings.EqualFold(parsed.Scheme, "ssh") {
		return parseURL(u)
	}
	if h, err := NormalizeHost(parsed.Hostname()); err != nil || !isGitHubHost(h) {
		return parseURLLoose(raw, u)
	}
	s, err := parseURL(u)
	if err != nil {
		return Source{}, err
	}
	if s.tree != "" || s.Ref != "" || s.Subdir != "" {
		return Source{}, invalid(raw, "is a tree URL; give the repository URL, with the subdirectory in \"path\" and the commit in \"sha\"")
	}
	return s, nil
}

// LooksLikeRepoURL reports whether raw is spelled as a repository URL at
// all (a scheme, or git@host:path), whatever else is wrong with it.
func LooksLikeRepoURL(raw string) bool {
	return schemeRE.MatchString(raw) || scpRE.MatchString(raw)
}

var repoShorthandRE = lazyregexp.New(`^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$`)

// parseURLLoose is parseURL for another host without the ".git" rule.
func parseURLLoose(raw, u string) (Source, error) {
	withGit := u
	if !strings.HasSuffix(strings.TrimSuffix(u, "/"), ".git") {
		withGit = strings.TrimSuffix(u, "/") + ".git"
	}
	s, err := parseURL(withGit)
	if err != nil {
		// Re-parse the original for a message about what the entry said.
		if _, err2 := parseURL(u); err2 != nil && !strings.Contains(err2.Error(), "PATH.git") {
			return Source{}, invalid(raw, "%s", trimSourcePrefix(err2))
		}
		return Source{}, invalid(raw, "%s", trimSourcePrefix(err))
	}
	if withGit != u {
		s.RepoPath = strings.TrimSuffix(s.RepoPath, ".git")
	}
	return s, nil
}

// trimSourcePrefix drops the `source "…": ` prefix of a nested error so the
// outer one, naming the original string, is not doubled.
func trimSourcePrefix(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, `": `); strings.HasPrefix(msg, `source "`) && i > 0 {
		return msg[i+3:]
	}
	return msg
}

// CheckRef validates a branch or tag name (git check-ref-format rules, plus
// no leading '-', so a ref can never read as an option) or a commit id.
func CheckRef(ref string) error {
	switch {
	case ref == "":
		return fmt.Errorf("is empty")
	case IsSHA(ref):
		return nil
	case strings.HasPrefix(ref, "-"):
		return fmt.Errorf("may not start with '-'")
	case strings.Contains(ref, ".."), strings.Contains(ref, "@{"), strings.Contains(ref, "//"):
		return fmt.Errorf("contains '..', '@{' or '//'")
	case strings.HasSuffix(ref, "/"), strings.HasSuffix(ref, "."), strings.HasSuffix(ref, ".lock"):
		return fmt.Errorf("may not end in '/', '.' or '.lock'")
	case ref == "@":
		return fmt.Errorf("is not a ref")
	case !utf8.ValidString(ref):
		// Git would take the bytes, but a ref goes into URLs, logs and the
		// team mirror's database, all of which hold text.
		return fmt.Errorf("is not UTF-8 text")
	}
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || unicode.IsSpace(r) || strings.ContainsRune(`~^:?*[\`, r) {
			return fmt.Errorf("contains a character git does not allow in ref names")
		}
	}
	if slices.ContainsFunc(strings.Split(ref, "/"), func(seg string) bool { return strings.HasPrefix(seg, ".") }) {
		return fmt.Errorf("has a component starting with '.'")
	}
	return nil
}
