package tarball

import (
	"bytes"
	"fmt"
	"io"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	"reasonix.io/plugind"
)

const (
	// gitmodulesFile says, at a tree's root, where its submodules come from.
	gitmodulesFile = ".gitmodules"
	// maxGitmodules bounds what is kept of it: a few lines per submodule.
	maxGitmodules = 64 << 10
)

// gitmodulesCopy is .gitmodules as the tree holds it, kept as it is read
// through the copy from r.
type gitmodulesCopy struct {
	r    io.Reader
	data []byte
	over bool // longer than maxGitmodules
}

// keepGitmodules returns r, keeping a copy of what is read through it.
func (x *Writer) keepGitmodules(r io.Reader) io.Reader {
	x.gitmodules = &gitmodulesCopy{r: r}
	return x.gitmodules
}

func (c *gitmodulesCopy) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 && !c.over {
		if len(c.data)+n > maxGitmodules {
			c.over, c.data = true, nil
		} else {
			c.data = append(c.data, p[:n]...)
		}
	}
	return n, err
}

// parseGitmodules reads the tree's .gitmodules: each submodule's path and
// URL (nothing else of it is used: no update command, no branch). It is
// outside input naming where content comes from, so a path that is not a
// clean path inside the tree, or two entries claiming one folder, refuse it.
func (x *Writer) parseGitmodules() (map[string]string, error) {
	c := x.gitmodules
	switch {
	case c == nil:
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "the tree has submodules but no %s saying where they come from", gitmodulesFile)
	case c.over:
		return nil, unsafeEntry(gitmodulesFile, "larger than %s", plugind.HumanBytes(maxGitmodules))
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(c.data)).Decode(cfg); err != nil {
		return nil, unsafeEntry(gitmodulesFile, "not a valid git config file: %v", err)
	}
	urls := map[string]string{}
	claimed := map[string]string{} // fold key → section name
	for _, sub := range cfg.Section("submodule").Subsections {
		raw := sub.Option("path")
		p, err := plugind.CleanEntryName(raw, false)
		if err != nil {
			return nil, unsafeEntry(gitmodulesFile, "submodule %q has the path %q: %v", sub.Name, raw, err)
		}
		key := plugind.FoldKey(p)
		if other, ok := claimed[key]; ok {
			return nil, unsafeEntry(gitmodulesFile, "submodules %q and %q both claim the folder %q", other, sub.Name, p)
		}
		claimed[key] = sub.Name
		urls[p] = sub.Option("url")
	}
	return urls, nil
}

// describeSubmodule names a submodule in messages.
func describeSubmodule(path, commit string) string {
	return fmt.Sprintf("submodule %q (commit %s)", path, commit)
}
