// Package source is the grammar of plugin sources (SPEC §5): one detection
// step turns what a user typed (or a marketplace entry named) into a typed
// Source, refusing everything that cannot be right before any network or
// file system access. Every other package asks a Source what it is; none
// re-parses strings or decides "is this local?" on its own.
package source

import (
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/secrets"
)

// Kind is what a source names.
type Kind uint8

const (
	// LocalDir is a folder on this machine (existence is checked when it is
	// resolved, not here).
	LocalDir Kind = iota + 1
	// LocalZip is a .zip archive on this machine.
	LocalZip
	// GitHub is a repository on github.com, or a tree (ref and folder) in one.
	GitHub
	// Git is a repository on any other host, over HTTPS or SSH (IsSSH).
	Git
	// MarketEntry is NAME@MARKET: entry NAME of the known marketplace MARKET.
	MarketEntry
)

func (k Kind) String() string {
	if k < LocalDir || k > MarketEntry {
		return "invalid"
	}
	return [...]string{LocalDir: "local", LocalZip: "zip", GitHub: "github", Git: "git", MarketEntry: "marketplace entry"}[k]
}

// GitHubHost is the host GitHub sources name, whatever transport serves them.
const GitHubHost = "github.com"

// form is how a remote source was spelled, so String gives it back in the
// user's own form.
type form uint8

const (
	formGitScheme form = iota + 1 // git:github.com/O/R
	formRepo                      // https://github.com/O/R or https://HOST/PATH[.git]
	formTree                      // https://github.com/O/R/tree/REST
)

// Source is a parsed source. The zero value is not a valid source.
type Source struct {
	Kind Kind

	// Path is a local source's path as given (LocalDir, LocalZip).
	Path string

	// Host is a remote source's lower-case host ("github.com" for GitHub).
	Host string
	// RepoPath is the repository's path on its host as written: "owner/repo"
	// for GitHub; "team/tools.git" (or without ".git", as a marketplace
	// entry may spell it) for other hosts.
	RepoPath string
	// Ref is a branch, tag or 40-hex commit; "" means the default branch.
	Ref string
	// Subdir is the plugin's folder inside the repository; "" for its root.
	Subdir string
	// tree holds a GitHub tree URL's segments until Split separates REF
	// from PATH (a REF may contain '/').
	tree string
	form form

	// ssh, when on, reaches a Git repository over SSH (ssh.go).
	ssh sshTransport

	// Entry and Market name a marketplace entry (MarketEntry).
	Entry, Market string

	// masked makes String mask what looks like a credential (Masked).
	masked bool
}

// IsSHA reports whether s is a full 40-hex lower-case commit id.
func IsSHA(s string) bool { return plugind.IsCommitID(s) }

// IsLocal reports whether s names something on this machine.
func (s Source) IsLocal() bool { return s.Kind == LocalDir || s.Kind == LocalZip }

// IsRemote reports whether s is a git repository somewhere else.
func (s Source) IsRemote() bool { return s.Kind == GitHub || s.Kind == Git }

// Repo is the repository's path without a ".git" suffix: "owner/repo" on
// GitHub, "team/tools" elsewhere.
func (s Source) Repo() string { return strings.TrimSuffix(s.RepoPath, ".git") }

// Owner and Name split a GitHub repository path.
func (s Source) Owner() string {
	o, _, _ := strings.Cut(s.Repo(), "/")
	return o
}

// Name is a GitHub repository's name (the part after the owner).
func (s Source) Name() string {
	_, n, _ := strings.Cut(s.Repo(), "/")
	return n
}

// Key names the repository in caches and messages, independent of where its
// transport points: "github.com/owner/repo", "git.example.test/team/tools".
// An SSH repository's key is its canonical URL without ".git"
// ("ssh://git@git.example.test/team/tools"): the same repository over
// HTTPS is asked with other credentials, and what one transport could not
// see must not be remembered as missing for the other.
func (s Source) Key() string {
	if s.ssh.on {
		return "ssh://" + s.sshAuthority() + "/" + s.Repo()
	}
	return s.Host + "/" + s.Repo()
}

// Place is the repository's host and path ("git.example.test/team/tools"),
// whatever transport reaches it: what a mirror's policy rules and token
// scopes name. Key keeps SSH apart for the cache; a rule that blocks a
// host must block it over SSH too.
func (s Source) Place() string { return s.Host + "/" + s.Repo() }

// URL is the repository's address for git, before any transport rewrite:
// "https://github.com/owner/repo.git", or an SSH source's canonical
// "ssh://git@host/team/tools.git".
func (s Source) URL() string {
	if s.ssh.on {
		return "ssh://" + s.sshAuthority() + "/" + s.RepoPath
	}
	p := s.RepoPath
	if s.Kind == GitHub {
		p = s.Repo() + ".git"
	}
	return "https://" + s.Host + "/" + p
}

// Pinned reports whether the source names a commit.
func (s Source) Pinned() bool { return IsSHA(s.Ref) }

// NeedsSplit reports whether a GitHub tree URL's REF and PATH are still to
// be told apart (Split, once the remote's refs are known).
func (s Source) NeedsSplit() bool { return s.tree != "" && s.Ref == "" && s.Subdir == "" }

// TreeRest is a tree URL's segments after /tree/ ("release/v2/plugins/x").
func (s Source) TreeRest() string { return s.tree }

// Split returns s with its tree URL's REF and PATH separated against the
// refs the remote advertises: the longest ref that is a whole-segment prefix
// wins; a 40-hex first segment is a commit; with no ref known, the first
// segment is the ref (SPEC §5).
func (s Source) Split(refs []string) Source {
	if !s.NeedsSplit() {
		return s
	}
	segs := strings.Split(s.tree, "/")
	best := 1 // a commit id, or no ref matching: the first segment is the ref
	if !IsSHA(segs[0]) {
		for i := len(segs); i >= 1; i-- {
			if slices.Contains(refs, strings.Join(segs[:i], "/")) {
				best = i
				break
			}
		}
	}
	// Told apart, the segments are the ref and the folder alone, so a split
	// source equals the one its text (the same tree URL) reads back as.
	s.Ref, s.Subdir, s.tree = strings.Join(segs[:best], "/"), strings.Join(segs[best:], "/"), ""
	return s
}

// String is the canonical spelling of the source, in the user's own form:
// what the registry records for a branch-tracking source.
func (s Source) String() string {
	if s.masked {
		return secrets.Mask(s.text())
	}
	return s.text()
}

// Masked returns s for display: its String (and text) masks whatever in
// it looks like a credential, as secrets.Mask does. A parsed source holds
// none a URL could carry (userinfo and queries are refused), but a folder's
// name is free text. A masked source is shown, never recorded.
func (s Source) Masked() Source {
	s.masked = true
	return s
}

func (s Source) text() string {
	switch s.Kind {
	case LocalDir, LocalZip:
		return s.Path
	case MarketEntry:
		return s.Entry + "@" + s.Market
	case GitHub:
		switch {
		case s.form == formGitScheme:
			return "git:github.com/" + s.Repo()
		case s.tree != "":
			return "https://github.com/" + s.Repo() + "/tree/" + s.tree
		case s.Ref != "" || s.Subdir != "":
			// The tree URL of the folder at the ref (SPEC §7).
			return "https://github.com/" + s.Repo() + "/tree/" + strings.TrimSuffix(s.Ref+"/"+s.Subdir, "/")
		}
		return "https://github.com/" + s.Repo()
	case Git:
		u := s.URL()
		if s.Ref != "" {
			u += "#" + s.Ref
		}
		return u
	}
	return ""
}

// At returns s pinned to commit sha, keeping its subdirectory.
func (s Source) At(sha string) Source {
	s.Ref, s.tree = sha, ""
	if s.Kind == GitHub {
		s.form = formTree
	}
	return s
}

// WithSubdir returns s naming folder p inside its repository.
func (s Source) WithSubdir(p string) Source {
	s.Subdir = p
	if s.Kind == GitHub && s.form == formGitScheme {
		s.form = formRepo
	}
	s.tree = ""
	return s
}

// Recorded is what the registry records for a plugin installed from this
// repository at commit sha, folder subdir (SPEC §7): a GitHub tree URL, or
// on another host the repository URL with "#<sha>" (the folder is recorded
// beside it, see RecordedSubdir). The value holds what its text says, so it
// reads back (ParseRecorded) as itself.
func (s Source) Recorded(sha, subdir string) Source {
	if s.Kind == GitHub {
		return s.At(sha).WithSubdir(subdir)
	}
	return s.At(sha).Bare()
}

// RecordedSubdir is the folder recorded beside Recorded: "" on GitHub, whose
// tree URL already holds it.
func (s Source) RecordedSubdir(subdir string) string {
	if s.Kind == GitHub {
		return ""
	}
	return subdir
}
