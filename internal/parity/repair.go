package parity

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repair makes a fetched snapshot servable. A snapshot the search tool's
// fetch brings lacks files of 4 MiB and more, so cloning its HEAD fails
// ("unable to read <sha>"): Claude Code cannot add it as a marketplace,
// nor reasonix read it. Repair writes, at out (which must not exist), a new
// bare repository whose main branch is one commit: HEAD's tree with every
// missing blob replaced by a short placeholder and every missing tree left
// out, with HEAD's author, committer and dates, and a message naming the
// original commit and what was replaced. It returns the commit to serve:
// HEAD itself when nothing is missing (and then writes nothing). The
// history is not carried over: each of also (other commits entries pin) is
// rebuilt the same way on a branch of its own, parity-COMMIT, and served
// maps HEAD and each of them to the commit that stands for it.
func Repair(ctx context.Context, gitDir, out string, also ...string) (commit string, served map[string]string, repaired bool, err error) {
	src, err := filepath.Abs(gitDir)
	if err != nil {
		return "", nil, false, err
	}
	head, err := Git(ctx, src, nil, "rev-parse", "HEAD")
	if err != nil {
		return "", nil, false, err
	}
	// HEAD's tree only: a shallow clone, as Claude makes, reads no history.
	missing, err := Git(ctx, src, nil, "rev-list", "--objects", "--no-walk", "--missing=print", "HEAD")
	if err != nil {
		return "", nil, false, err
	}
	if !strings.Contains("\n"+missing, "\n?") {
		return head, nil, false, nil
	}
	if _, err := os.Stat(out); err == nil {
		return "", nil, false, fmt.Errorf("repair: %s exists", out)
	}
	if _, err := Git(ctx, "", nil, "init", "-q", "--bare", "-b", "main", out); err != nil {
		return "", nil, false, err
	}
	dst, err := filepath.Abs(out)
	if err != nil {
		return "", nil, false, err
	}
	// Read the snapshot's objects in place; repack copies what is used.
	if err := os.WriteFile(filepath.Join(dst, "objects", "info", "alternates"), []byte(filepath.Join(src, "objects")+"\n"), 0o644); err != nil {
		return "", nil, false, err
	}
	served = map[string]string{}
	for i, c := range append([]string{head}, also...) {
		if _, done := served[c]; done {
			continue
		}
		branch := "main"
		if i > 0 {
			branch = "parity-" + c[:min(12, len(c))]
		}
		rebuilt, err := rebuild(ctx, src, dst, c)
		if err != nil {
			return "", nil, false, err
		}
		if _, err := Git(ctx, dst, nil, "update-ref", "refs/heads/"+branch, rebuilt); err != nil {
			return "", nil, false, err
		}
		served[c] = rebuilt
	}
	if _, err := Git(ctx, dst, nil, "repack", "-a", "-d", "-q"); err != nil {
		return "", nil, false, err
	}
	if err := os.Remove(filepath.Join(dst, "objects", "info", "alternates")); err != nil {
		return "", nil, false, err
	}
	return served[head], served, true, nil
}

// rebuild writes into dst a parentless commit of commit c of src: its tree
// with what src lacks replaced, its author, committer and dates.
func rebuild(ctx context.Context, src, dst, c string) (string, error) {
	r := &repairer{ctx: ctx, dir: dst}
	tree, err := r.tree(c+"^{tree}", "")
	if err != nil {
		return "", err
	}
	env := []string{}
	for _, kv := range []struct{ key, format string }{
		{"GIT_AUTHOR_NAME", "%an"}, {"GIT_AUTHOR_EMAIL", "%ae"}, {"GIT_AUTHOR_DATE", "%aI"},
		{"GIT_COMMITTER_NAME", "%cn"}, {"GIT_COMMITTER_EMAIL", "%ce"}, {"GIT_COMMITTER_DATE", "%cI"},
	} {
		v, err := Git(ctx, src, nil, "log", "-1", "--format="+kv.format, c)
		if err != nil {
			return "", err
		}
		env = append(env, kv.key+"="+v)
	}
	msg := fmt.Sprintf("snapshot of %s with %d missing blob(s) replaced by placeholders and %d missing tree(s) left out\n\n%s",
		c, r.blobs, r.trees, strings.Join(r.replaced, "\n"))
	return Git(ctx, dst, env, "commit-tree", tree, "-m", msg)
}

// repairer rebuilds trees, replacing what the snapshot lacks.
type repairer struct {
	ctx          context.Context
	dir          string
	blobs, trees int
	replaced     []string
	placeholder  string
}

// tree returns the SHA of tree (at path prefix) rebuilt: entries whose
// object is missing are replaced (a blob) or left out (a tree).
func (r *repairer) tree(tree, prefix string) (string, error) {
	list, err := Git(r.ctx, r.dir, nil, "ls-tree", "-z", tree)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for _, ent := range strings.Split(list, "\x00") {
		if ent == "" {
			continue
		}
		meta, name, _ := strings.Cut(ent, "\t")
		f := strings.Fields(meta) // mode type sha
		if len(f) != 3 {
			return "", fmt.Errorf("repair: ls-tree line %q", ent)
		}
		mode, typ, sha := f[0], f[1], f[2]
		switch typ {
		case "tree":
			if !r.has(sha) {
				r.trees++
				r.replaced = append(r.replaced, "left out (missing tree): "+prefix+name)
				continue
			}
			sub, err := r.tree(sha, prefix+name+"/")
			if err != nil {
				return "", err
			}
			sha = sub
		case "blob":
			if !r.has(sha) {
				ph, err := r.placeholderBlob()
				if err != nil {
					return "", err
				}
				r.blobs++
				r.replaced = append(r.replaced, "placeholder (missing blob "+sha+"): "+prefix+name)
				sha = ph
			}
		}
		fmt.Fprintf(&buf, "%s %s %s\t%s\x00", mode, typ, sha, name)
	}
	cmd := exec.CommandContext(r.ctx, "git", "--git-dir", r.dir, "mktree", "-z", "--missing")
	cmd.Stdin = &buf
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("repair: git mktree: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func (r *repairer) has(sha string) bool {
	_, err := Git(r.ctx, r.dir, nil, "cat-file", "-e", sha)
	return err == nil
}

func (r *repairer) placeholderBlob() (string, error) {
	if r.placeholder != "" {
		return r.placeholder, nil
	}
	cmd := exec.CommandContext(r.ctx, "git", "--git-dir", r.dir, "hash-object", "-w", "--stdin")
	cmd.Stdin = strings.NewReader("placeholder: the snapshot lacks this file (4 MiB or more)\n")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("repair: git hash-object: %w", err)
	}
	r.placeholder = strings.TrimSpace(string(out))
	return r.placeholder, nil
}

// Git runs git on gitDir ("" for none) and returns its trimmed output.
func Git(ctx context.Context, gitDir string, env []string, args ...string) (string, error) {
	if gitDir != "" {
		args = append([]string{"--git-dir", gitDir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
