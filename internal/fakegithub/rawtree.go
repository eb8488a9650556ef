package fakegithub

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
)

// RawEntry is one entry of a tree that CommitRawTree writes verbatim, with
// none of the checks honest git makes: names may repeat, differ only by case
// or Unicode folding ("README.md" and "readme.md", "k.md" and "\u212a.md"),
// be "..", ".git" or "", hold "/" or control bytes; a symlink "a" may sit
// beside a directory "a" holding files.
type RawEntry struct {
	Name string // any bytes but NUL
	// Mode is "100644", "100755" or "100664" (a file), "120000" (a
	// symlink), "040000" or "40000" (a directory, written as git does,
	// "40000") or "160000" (a submodule).
	Mode string
	// Content is a file's bytes, a symlink's target, or a submodule's
	// 40-hex commit id (which need not exist). Empty for directories.
	Content string
	Entries []RawEntry // a directory's entries
}

// rawNode is a RawEntry checked and resolved to the object it names.
type rawNode struct {
	name     string
	mode     string // as written in the tree object
	isTree   bool
	blob     int // index into the blob list; -1 when not a blob
	gitlink  string
	children []rawNode
}

func parseRawEntries(entries []RawEntry, dir string, blobs *[]string) ([]rawNode, error) {
	nodes := make([]rawNode, 0, len(entries))
	for _, e := range entries {
		where := fmt.Sprintf("entry %q in %q", e.Name, dir)
		if strings.IndexByte(e.Name, 0) >= 0 {
			return nil, fmt.Errorf("%s: a tree entry name cannot hold a NUL byte", where)
		}
		n := rawNode{name: e.Name, mode: e.Mode, blob: -1}
		switch e.Mode {
		case "100644", "100755", "100664", "120000":
			if e.Entries != nil {
				return nil, fmt.Errorf("%s: mode %s has no entries", where, e.Mode)
			}
			n.blob = len(*blobs)
			*blobs = append(*blobs, e.Content)
		case "040000", "40000":
			if e.Content != "" {
				return nil, fmt.Errorf("%s: a directory has no content", where)
			}
			children, err := parseRawEntries(e.Entries, dir+e.Name+"/", blobs)
			if err != nil {
				return nil, err
			}
			n.mode, n.isTree, n.children = "40000", true, children
		case "160000":
			if !isHex40(e.Content) || e.Entries != nil {
				return nil, fmt.Errorf("%s: a submodule's content is a 40-hex commit id and it has no entries", where)
			}
			n.gitlink = e.Content
		default:
			return nil, fmt.Errorf("%s: mode %q is not one of 100644, 100755, 100664, 120000, 040000, 160000", where, e.Mode)
		}
		nodes = append(nodes, n)
	}
	// git's own order (a directory sorts as if its name ended in "/"),
	// stable so duplicates keep the caller's order. Readers such as git's
	// path lookup stop at the first name past the one sought, so an
	// unsorted tree would hide entries from git itself, which is not the
	// attack being modelled.
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].sortName() < nodes[j].sortName() })
	return nodes, nil
}

func (n rawNode) sortName() string {
	if n.isTree {
		return n.name + "/"
	}
	return n.name
}

// CommitRawTree commits a root tree made of entries exactly as given on
// branch (which starts from the default branch's head when missing, like
// Commit) and returns the commit's SHA. Trees are written with
// `git hash-object -t tree --literally`, which checks nothing. The commit is
// served over git like any other, and through the tarball route as git
// archive renders it; git archive refuses entries named "", ".", ".." or
// ".git" (in any case), so the archive route answers 500 for those trees
// (SetArchive can serve a hand-made archive instead).
func (r *Repo) CommitRawTree(branch string, entries []RawEntry) string {
	r.s.helper()
	sha, err := r.commitRawTree(branch, entries)
	if err != nil {
		r.s.fail(fmt.Errorf("%s: raw tree commit on %q: %w", r.path, branch, err))
	}
	return sha
}

func (r *Repo) commitRawTree(branch string, entries []RawEntry) (string, error) {
	if err := checkRefName(branch); err != nil {
		return "", err
	}
	var blobs []string
	root, err := parseRawEntries(entries, "", &blobs)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	blobIDs, err := r.writeBlobs(ctx, blobs)
	if err != nil {
		return "", err
	}
	tree, err := r.writeRawTree(ctx, root, blobIDs)
	if err != nil {
		return "", err
	}
	old, err := r.head(ctx, branch)
	if err != nil {
		return "", err
	}
	parent, err := r.branchParent(ctx, branch)
	if err != nil {
		return "", err
	}
	r.seq++
	var c bytes.Buffer
	fmt.Fprintf(&c, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&c, "parent %s\n", parent)
	}
	r.writeIdentity(&c, "author")
	r.writeIdentity(&c, "committer")
	fmt.Fprintf(&c, "\nfakegithub raw tree commit %d on %s\n", r.seq, branch)
	sha, err := r.hashObject(ctx, "commit", c.Bytes())
	if err != nil {
		return "", err
	}
	// old is "" for a new branch: update-ref then insists it not exist.
	if _, err := r.s.runGit(ctx, r.gitDir, nil, "update-ref", "refs/heads/"+branch, sha, old); err != nil {
		return "", err
	}
	return sha, nil
}

// writeBlobs stores contents with one fast-import and returns their ids in
// order.
func (r *Repo) writeBlobs(ctx context.Context, contents []string) ([]string, error) {
	if len(contents) == 0 {
		return nil, nil
	}
	out, err := r.fastImportStream(ctx, func(w io.Writer) error {
		for i, c := range contents {
			fmt.Fprintf(w, "blob\nmark :%d\n", i+1)
			writeData(w, c)
		}
		for i := range contents {
			fmt.Fprintf(w, "get-mark :%d\n", i+1)
		}
		_, err := io.WriteString(w, "done\n")
		return err
	})
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(contents) {
		return nil, fmt.Errorf("fast-import printed %d blob ids for %d blobs", len(ids), len(contents))
	}
	return ids, nil
}

// writeRawTree writes nodes (children first) and returns the tree's id.
func (r *Repo) writeRawTree(ctx context.Context, nodes []rawNode, blobIDs []string) (string, error) {
	var b bytes.Buffer
	for _, n := range nodes {
		id := n.gitlink
		switch {
		case n.isTree:
			sub, err := r.writeRawTree(ctx, n.children, blobIDs)
			if err != nil {
				return "", err
			}
			id = sub
		case n.blob >= 0:
			id = blobIDs[n.blob]
		}
		raw, err := hex.DecodeString(id)
		if err != nil || len(raw) != 20 {
			return "", fmt.Errorf("entry %q: object id %q is not 40 hex digits", n.name, id)
		}
		fmt.Fprintf(&b, "%s %s\x00", n.mode, n.name)
		b.Write(raw)
	}
	return r.hashObject(ctx, "tree", b.Bytes())
}

// hashObject stores data as an object of type typ. --literally skips the
// checks that would refuse a hostile tree.
func (r *Repo) hashObject(ctx context.Context, typ string, data []byte) (string, error) {
	out, err := r.s.runGit(ctx, r.gitDir, bytes.NewReader(data), "hash-object", "-t", typ, "--literally", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(out))
	if !isHex40(id) {
		return "", fmt.Errorf("hash-object printed %q, not an object id", id)
	}
	return id, nil
}
