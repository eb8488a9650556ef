package source

import (
	"path"
	"path/filepath"
	"strings"
)

// The parts of where a source points that a move can change (SPEC §9: an
// update that changes one is its own line in every review and raises the
// risk of approving it).
const (
	PartHost       = "host"
	PartOwner      = "owner"
	PartRepository = "repository"
	PartSubfolder  = "subfolder"
	// PartFolder is a local source's folder.
	PartFolder = "folder"
)

// Moves lists what differs between where s points and where t does, in
// the order host, owner, repository, subfolder (a local folder's path is
// "folder"; a move between this machine and a remote host is "host").
// Refs and commits are not places: a new commit of the same repository
// and folder is no move. GitHub owners and repositories compare without
// case, as GitHub resolves them; other hosts' paths exactly. A tree URL
// not yet split is split without the remote's refs, so both sides must
// be recorded forms (whose first tree segment is a commit) or spelled the
// same way for the split to agree.
func (s Source) Moves(t Source) []string {
	s, t = s.Split(nil), t.Split(nil)
	if s.IsRemote() != t.IsRemote() {
		return []string{PartHost}
	}
	if !s.IsRemote() {
		if s.Kind != t.Kind || filepath.Clean(s.Path) != filepath.Clean(t.Path) || cleanSubdir(s.Subdir) != cleanSubdir(t.Subdir) {
			return []string{PartFolder}
		}
		return nil
	}
	var out []string
	if s.Host != t.Host {
		out = append(out, PartHost)
	}
	so, sn := s.ownerAndName()
	to, tn := t.ownerAndName()
	same := func(a, b string) bool { return a == b }
	if s.Kind == GitHub && t.Kind == GitHub {
		same = strings.EqualFold
	}
	if !same(so, to) {
		out = append(out, PartOwner)
	}
	if !same(sn, tn) {
		out = append(out, PartRepository)
	}
	if cleanSubdir(s.Subdir) != cleanSubdir(t.Subdir) {
		out = append(out, PartSubfolder)
	}
	return out
}

// ownerAndName splits the repository path: GitHub's owner and name; on
// other hosts, everything before the last segment (a group, and its
// subgroups) and the last segment.
func (s Source) ownerAndName() (owner, name string) {
	if s.Kind == GitHub {
		return s.Owner(), s.Name()
	}
	repo := s.Repo()
	if i := strings.LastIndex(repo, "/"); i >= 0 {
		return repo[:i], repo[i+1:]
	}
	return "", repo
}

// Where names the place a source points at, without its ref, for a review
// line: "github.com/acme/tools (folder plugins/q)", or a local path.
func (s Source) Where() string {
	s = s.Split(nil)
	w := s.Path
	if s.IsRemote() {
		w = s.Key()
	}
	if sub := cleanSubdir(s.Subdir); sub != "" {
		w += " (folder " + sub + ")"
	}
	return w
}

func cleanSubdir(p string) string {
	c := path.Clean(strings.Trim(p, "/"))
	if c == "." {
		return ""
	}
	return c
}
