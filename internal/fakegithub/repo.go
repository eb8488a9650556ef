package fakegithub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Repo is a bare repository served by the fake. Its helpers fail the test
// (or panic, for servers made with Start) on error. For a repository at a
// nested path (plain-git mode), Owner is everything before the last "/"
// ("group/sub" for "group/sub/tools", "" for "tools") and Name the last
// segment.
type Repo struct {
	Owner string
	Name  string

	s      *Server
	path   string // as created: "owner/name" or a plain-git path
	gitDir string

	mu            sync.Mutex // serializes writes; guards seq and defaultBranch
	seq           int
	defaultBranch string

	refsMu  sync.Mutex // guards the last ref listing (refs)
	refKey  string
	refList []ref
}

// Commits and tags get fixed identities and dates (one minute apart, per
// repository) so the same sequence of helper calls gives the same SHAs on
// every run and machine.
const (
	identity  = "Fake GitHub <fake@reasonix.test>"
	epoch     = 1700000000
	opTimeout = 2 * time.Minute
)

// CreateRepo creates an empty bare repository owner/name whose default
// branch is "main". Names follow GitHub's rules and are case-insensitive.
func (s *Server) CreateRepo(owner, name string) *Repo {
	s.helper()
	r, err := s.createRepo(owner, name)
	if err != nil {
		s.fail(err)
		return nil
	}
	return r
}

// CreateRepoAt creates an empty bare repository at path, whose default
// branch is "main". On a plain-git server (WithPlainGit) path may have any
// depth ("tools", "team/tools", "group/sub/tools"); on a GitHub server it
// must be "owner/name". Paths are case-insensitive.
func (s *Server) CreateRepoAt(path string) *Repo {
	s.helper()
	r, err := s.createRepoAt(path)
	if err != nil {
		s.fail(err)
		return nil
	}
	return r
}

func (s *Server) createRepo(owner, name string) (*Repo, error) {
	if !validOwner(owner) || !validName(name) || hasGitSuffix(name) {
		return nil, fmt.Errorf("create repo %q/%q: not a valid GitHub owner/name", owner, name)
	}
	return s.createRepoAt(owner + "/" + name)
}

func (s *Server) createRepoAt(path string) (*Repo, error) {
	if err := s.checkRepoPath(path); err != nil {
		return nil, fmt.Errorf("create repo: %w", err)
	}
	key := pathKey(path)
	// Reserve the name first so two creations cannot both run git init; the
	// repo is unusable (404) only for the few milliseconds init takes.
	r, err := s.reserveRepo(path)
	if err != nil {
		return nil, fmt.Errorf("create repo: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	err = os.MkdirAll(filepath.Dir(r.gitDir), 0o755)
	if err == nil {
		_, err = s.runGit(ctx, "", nil, "init", "--bare", "--quiet", "--template=", "--initial-branch=main", r.gitDir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.repos, key)
		return nil, fmt.Errorf("create repo %s: %w", path, err)
	}
	s.repos[key] = r
	return r, nil
}

// Dir is the bare repository's directory.
func (r *Repo) Dir() string { return r.gitDir }

// Path is the repository's path on the server: "owner/name", or a plain-git
// path such as "group/sub/tools".
func (r *Repo) Path() string { return r.path }

// CloneURL is the repository's git URL on the fake (with ".git").
func (r *Repo) CloneURL() string { return r.s.URL + "/" + r.path + ".git" }

// Commit writes files on top of branch's current tree and returns the new
// commit's SHA. A missing branch starts from the default branch's head, or
// from nothing in an empty repository. Content values may be Executable(…),
// Symlink(…) or Deleted.
func (r *Repo) Commit(branch string, files map[string]string) string {
	r.s.helper()
	list, deletes := filesFromMap(files)
	sha, err := r.commit(branch, change{files: list, deletes: deletes})
	if err != nil {
		r.s.fail(err)
	}
	return sha
}

// CommitTree commits files on branch; with replace the new tree is exactly
// these files, otherwise they are written over the current tree.
func (r *Repo) CommitTree(branch string, files []File, replace bool) string {
	r.s.helper()
	sha, err := r.commit(branch, change{files: files, replace: replace})
	if err != nil {
		r.s.fail(err)
	}
	return sha
}

// Delete commits the removal of paths from branch.
func (r *Repo) Delete(branch string, paths ...string) string {
	r.s.helper()
	sha, err := r.commit(branch, change{deletes: paths})
	if err != nil {
		r.s.fail(err)
	}
	return sha
}

// Head returns branch's head commit SHA, or "" when the branch does not exist.
func (r *Repo) Head(branch string) string {
	r.s.helper()
	if err := checkRefName(branch); err != nil {
		r.s.fail(err)
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	sha, err := r.head(ctx, branch)
	if err != nil {
		r.s.fail(fmt.Errorf("%s: head of %q: %w", r.path, branch, err))
	}
	return sha
}

// Tag creates or moves the lightweight tag name to commit sha.
func (r *Repo) Tag(name, sha string) {
	r.s.helper()
	if err := r.setRef("refs/tags/", name, sha); err != nil {
		r.s.fail(err)
	}
}

// ResetBranch creates branch at sha or force-moves it there (a force push).
func (r *Repo) ResetBranch(branch, sha string) {
	r.s.helper()
	if err := r.setRef("refs/heads/", branch, sha); err != nil {
		r.s.fail(err)
	}
}

func (r *Repo) setRef(prefix, name, sha string) error {
	if err := checkRefName(name); err != nil {
		return err
	}
	if !isHex40(sha) {
		return fmt.Errorf("%s: set %s%s: %q is not a 40-hex commit id", r.path, prefix, name, sha)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := r.mustBeCommit(ctx, sha); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	stream := bytes.NewBufferString(fmt.Sprintf("reset %s%s\nfrom %s\n\ndone\n", prefix, name, sha))
	if _, err := r.fastImport(ctx, stream); err != nil {
		return fmt.Errorf("%s: set %s%s: %w", r.path, prefix, name, err)
	}
	return nil
}

// AnnotatedTag creates an annotated tag object named name pointing at sha,
// so the advertisement carries a peeled "^{}" entry as on GitHub.
func (r *Repo) AnnotatedTag(name, sha, message string) {
	r.s.helper()
	if err := r.annotatedTag(name, sha, message); err != nil {
		r.s.fail(err)
	}
}

func (r *Repo) annotatedTag(name, sha, message string) error {
	if err := checkRefName(name); err != nil {
		return err
	}
	if !isHex40(sha) {
		return fmt.Errorf("%s: tag %s: %q is not a 40-hex commit id", r.path, name, sha)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := r.mustBeCommit(ctx, sha); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	var b bytes.Buffer
	fmt.Fprintf(&b, "tag %s\nfrom %s\n", name, sha)
	r.writeIdentity(&b, "tagger")
	writeData(&b, message)
	b.WriteString("done\n")
	if _, err := r.fastImport(ctx, &b); err != nil {
		return fmt.Errorf("%s: tag %s: %w", r.path, name, err)
	}
	return nil
}

// DeleteBranch removes a branch; its commits stay in the object store, so
// they become unreachable, as after a force push on GitHub: REST and
// archives still serve them by SHA, upload-pack refuses them.
func (r *Repo) DeleteBranch(name string) {
	r.s.helper()
	if err := r.deleteRef("refs/heads/", name); err != nil {
		r.s.fail(err)
	}
}

// DeleteTag removes a tag.
func (r *Repo) DeleteTag(name string) {
	r.s.helper()
	if err := r.deleteRef("refs/tags/", name); err != nil {
		r.s.fail(err)
	}
}

func (r *Repo) deleteRef(prefix, name string) error {
	if err := checkRefName(name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.s.runGit(ctx, r.gitDir, nil, "update-ref", "-d", prefix+name); err != nil {
		return fmt.Errorf("%s: delete %s%s: %w", r.path, prefix, name, err)
	}
	return nil
}

// SetDefaultBranch points HEAD (what clones check out and what the API calls
// default_branch) at name, which need not exist yet.
func (r *Repo) SetDefaultBranch(name string) {
	r.s.helper()
	if err := r.setDefaultBranch(name); err != nil {
		r.s.fail(err)
	}
}

func (r *Repo) setDefaultBranch(name string) error {
	if err := checkRefName(name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.s.runGit(ctx, r.gitDir, nil, "symbolic-ref", "HEAD", "refs/heads/"+name); err != nil {
		return fmt.Errorf("%s: set default branch %s: %w", r.path, name, err)
	}
	r.defaultBranch = name
	return nil
}

// DefaultBranch returns the branch HEAD points at.
func (r *Repo) DefaultBranch() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.defaultBranch
}

// mustBeCommit checks sha before it reaches fast-import, which would read
// the all-zero id as "delete this ref".
func (r *Repo) mustBeCommit(ctx context.Context, sha string) error {
	got, err := r.commitOf(ctx, sha)
	if errors.Is(err, errNoRef) || (err == nil && got != sha) {
		return fmt.Errorf("%s: %s is not a commit in this repository", r.path, sha)
	}
	return err
}
