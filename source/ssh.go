package source

import (
	"net/url"
	"strconv"
	"strings"

	"reasonix.io/plugind/internal/lazyregexp"
)

// SSH sources (SPEC §5): git@HOST:PATH[.git][#REF] (scp-like) and
// ssh://[USER@]HOST[:PORT]/PATH[#REF]. Both spellings of one repository are
// one Source, written back in the one canonical form
//
//	ssh://[USER@]HOST[:PORT]/PATH[#REF]
//
// (port 22 left out, the path as its segments were written, ".git" kept or
// not as written), so they share a cache key. An scp-like path is read from
// the root, as the hosting services read it ("git@h:team/x.git" is
// "ssh://git@h/team/x.git"); a path relative to the account's home on a
// plain sshd is written "~/x.git" (sent as git sends "/~…": without the
// leading slash). A pinned SSH source is recorded like any non-GitHub one:
// the canonical URL with "#<40-hex SHA>", its folder beside it.
//
// On github.com, SSH spellings name the GitHub source (the same repository
// over HTTPS with GITHUB_TOKEN, the REST API and the archive fallback), as
// they did before SSH was supported: a public repository keeps working
// without keys, and recorded sources do not change.

// sshUserRE is the user part: what account names are made of, never an
// option ('-') or a password (':').
var sshUserRE = lazyregexp.New(`^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$`)

// sshTransport marks an SSH source: its user and port ("" for 22).
type sshTransport struct {
	on         bool
	user, port string
}

// IsSSH reports whether s is a repository reached over SSH.
func (s Source) IsSSH() bool { return s.ssh.on }

// sshAuthority is "[USER@]HOST[:PORT]".
func (s Source) sshAuthority() string {
	a := s.Host
	if s.ssh.user != "" {
		a = s.ssh.user + "@" + a
	}
	if s.ssh.port != "" {
		a += ":" + s.ssh.port
	}
	return a
}

// parseSCP reads git@HOST:PATH[#REF]: user, host and path as scpRE split
// them.
func parseSCP(raw, user, host, rest string) (Source, error) {
	p, ref, hasRef := strings.Cut(rest, "#")
	return sshSource(raw, user, false, host, "", "/"+p, ref, hasRef)
}

// parseSSHURL reads ssh://[USER@]HOST[:PORT]/PATH[#REF].
func parseSSHURL(raw string, u *url.URL) (Source, error) {
	if u.RawQuery != "" || u.ForceQuery {
		return Source{}, invalid(raw, "queries are not allowed")
	}
	user, hasPassword := "", false
	if u.User != nil {
		user = u.User.Username()
		_, hasPassword = u.User.Password()
	}
	return sshSource(raw, user, hasPassword, u.Hostname(), u.Port(), u.EscapedPath(), u.Fragment, u.Fragment != "" || strings.HasSuffix(raw, "#"))
}

// sshSource checks the parts of an SSH source, whichever its spelling:
// the same path hygiene as an https git source, a user that is a name, a
// port that is a number.
func sshSource(raw, user string, hasPassword bool, rawHost, port, escapedPath, ref string, hasRef bool) (Source, error) {
	switch {
	case hasPassword || strings.Contains(user, ":"):
		return Source{}, invalid(raw, "a password in the URL is not allowed; SSH sources authenticate with your SSH agent or key files")
	case user != "" && !sshUserRE.MatchString(user):
		return Source{}, invalid(raw, "%q is not a user name (letters, digits and . _ -, not starting with '-')", user)
	}
	host, err := NormalizeHost(rawHost)
	if err != nil {
		return Source{}, invalid(raw, "%v", err)
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return Source{}, invalid(raw, "port %q is not a port number", port)
		}
		if n == 22 {
			port = ""
		}
	}
	if isGitHubHost(host) {
		if hasRef || port != "" || (user != "" && user != "git") {
			return Source{}, invalid(raw, "on github.com, write git@github.com:OWNER/REPO (it is read as https://github.com/OWNER/REPO); name a ref with https://github.com/OWNER/REPO/tree/REF")
		}
		segs, err := pathSegments(raw, escapedPath)
		if err != nil {
			return Source{}, err
		}
		if len(segs) != 2 {
			return Source{}, invalid(raw, "expected git@github.com:OWNER/REPO")
		}
		return gitHubRepo(raw, segs[0], segs[1], formRepo)
	}
	segs, err := pathSegments(raw, escapedPath)
	if err != nil {
		return Source{}, err
	}
	for _, seg := range segs {
		if err := CheckSegment(seg); err != nil {
			return Source{}, invalid(raw, "path %v", err)
		}
	}
	if segs[0] == "~" && len(segs) == 1 {
		return Source{}, invalid(raw, "no repository path after '~'")
	}
	// The key drops ".git": what is left must still name a folder.
	if name := strings.TrimSuffix(segs[len(segs)-1], ".git"); name == "" || name == "." || name == ".." {
		return Source{}, invalid(raw, "%q is not a repository name", segs[len(segs)-1])
	}
	s := Source{Kind: Git, Host: host, RepoPath: strings.Join(segs, "/"), ssh: sshTransport{on: true, user: user, port: port}}
	if hasRef {
		if err := CheckRef(ref); err != nil {
			return Source{}, invalid(raw, "the #REF %v", err)
		}
		s.Ref = ref
	}
	return s, nil
}
