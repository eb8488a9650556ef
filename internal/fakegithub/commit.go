package fakegithub

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// change is what one commit does to its parent's tree.
type change struct {
	replace bool // start from an empty tree (fast-import's deleteall)
	deletes []string
	files   []File
	// stream, when set, writes further fast-import file commands after
	// files, straight into the pipe to git: content too big to hold in
	// memory (CommitLargeFile, CommitManyFiles) never is.
	stream func(w io.Writer) error
}

func (ch change) check() error {
	for _, f := range ch.files {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		if f.Gitlink != "" && !isHex40(f.Gitlink) {
			return fmt.Errorf("submodule %q: %q is not a 40-hex commit id", f.Path, f.Gitlink)
		}
	}
	for _, p := range ch.deletes {
		if err := checkPath(p); err != nil {
			return err
		}
	}
	return nil
}

// commit makes a commit on branch. A missing branch starts from the default
// branch's head, or from nothing in an empty repository.
func (r *Repo) commit(branch string, ch change) (string, error) {
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("%s: commit on %q: %w", r.path, branch, err)
	}
	if err := checkRefName(branch); err != nil {
		return fail(err)
	}
	if err := ch.check(); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	parent, err := r.branchParent(ctx, branch)
	if err != nil {
		return fail(err)
	}
	sha, err := r.fastCommit(ctx, "refs/heads/"+branch, parent, branch, ch, false)
	if err != nil {
		return fail(err)
	}
	return sha, nil
}

// branchParent is the commit a new commit on branch builds on: its head, or
// for a new branch the default branch's head ("" in an empty repository).
// The caller holds r.mu.
func (r *Repo) branchParent(ctx context.Context, branch string) (string, error) {
	parent, err := r.head(ctx, branch)
	if err != nil || parent != "" || branch == r.defaultBranch {
		return parent, err
	}
	return r.head(ctx, r.defaultBranch)
}

// fastCommit writes one commit on parent through fast-import and returns its
// SHA. With detached, ref is only fast-import's scratch name: a trailing
// "reset" without "from" deletes it before fast-import ever writes it, so
// the commit lands in the object store with no ref pointing at it. The
// caller holds r.mu.
func (r *Repo) fastCommit(ctx context.Context, ref, parent, label string, ch change, detached bool) (string, error) {
	r.seq++
	message := fmt.Sprintf("fakegithub commit %d on %s\n", r.seq, label)
	out, err := r.fastImportStream(ctx, func(w io.Writer) error {
		fmt.Fprintf(w, "commit %s\nmark :1\n", ref)
		r.writeIdentity(w, "author")
		r.writeIdentity(w, "committer")
		writeData(w, message)
		if parent != "" {
			fmt.Fprintf(w, "from %s\n", parent)
		}
		if ch.replace {
			io.WriteString(w, "deleteall\n")
		}
		for _, p := range ch.deletes {
			fmt.Fprintf(w, "D %s\n", quotePath(p))
		}
		for _, f := range ch.files {
			if f.Gitlink != "" {
				fmt.Fprintf(w, "M 160000 %s %s\n", f.Gitlink, quotePath(f.Path))
				continue
			}
			mode, data := f.gitMode()
			fmt.Fprintf(w, "M %s inline %s\n", mode, quotePath(f.Path))
			writeData(w, data)
		}
		if ch.stream != nil {
			if err := ch.stream(w); err != nil {
				return err
			}
		}
		io.WriteString(w, "\nget-mark :1\n")
		if detached {
			fmt.Fprintf(w, "reset %s\n\n", ref)
		}
		_, err := io.WriteString(w, "done\n")
		return err
	})
	if err != nil {
		return "", err
	}
	sha := strings.TrimSpace(string(out))
	if !isHex40(sha) {
		return "", fmt.Errorf("fast-import printed %q, not a commit id", sha)
	}
	return sha, nil
}

func (r *Repo) writeIdentity(w io.Writer, role string) {
	fmt.Fprintf(w, "%s %s %d +0000\n", role, identity, epoch+60*r.seq)
}

func (r *Repo) fastImport(ctx context.Context, stream io.Reader) ([]byte, error) {
	// --force: ResetBranch may move a ref backwards; commits always name
	// their parent explicitly, so nothing is lost by it. Compression level
	// 1 makes generated content (CommitLargeFile's zeros) a third cheaper
	// to write; the test data compresses well at any level.
	return r.s.runGitConfig(ctx, r.gitDir, [][2]string{{"core.compression", "1"}}, stream,
		"fast-import", "--quiet", "--force", "--done", "--date-format=raw")
}

// errGitStopped unblocks a stream writer whose reader, git, has exited.
var errGitStopped = errors.New("fast-import stopped reading")

// fastImportStream feeds fast-import what write produces through a pipe, so
// a commit's size never bounds the fake's memory. Write errors and partial
// streams fail the import: the stream ends with "done", which fast-import
// requires (--done) before it updates any ref.
func (r *Repo) fastImportStream(ctx context.Context, write func(w io.Writer) error) ([]byte, error) {
	pr, pw := io.Pipe()
	werr := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		err := write(bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
		werr <- err
	}()
	out, err := r.fastImport(ctx, pr)
	pr.CloseWithError(errGitStopped)
	if wErr := <-werr; err == nil && wErr != nil {
		err = fmt.Errorf("write fast-import stream: %w", wErr)
	}
	return out, err
}

// head returns refs/heads/branch's commit, or "" when the branch does not
// exist. The caller validated branch.
func (r *Repo) head(ctx context.Context, branch string) (string, error) {
	out, err := r.s.runGit(ctx, r.gitDir, nil, "rev-parse", "--quiet", "--verify", "refs/heads/"+branch+"^{commit}")
	var ge *gitError
	if errors.As(err, &ge) && ge.exitCode() == 1 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
