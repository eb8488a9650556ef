package parity

import (
	"context"
	"path/filepath"
	"strings"
)

// MirrorsEnv names the folder of fetched repositories
// (FOLDER/OWNER+NAME/repo, as the search tool's fetch leaves them). When
// set, the corpus parity test also installs each marketplace from the real
// repositories and requires the same outcome as from its skeletons.
const MirrorsEnv = "REASONIX_PARITY_MIRRORS"

// MirrorGitDir is the git directory of repo (OWNER/NAME) in mirrors, ""
// when it is not there.
func MirrorGitDir(ctx context.Context, mirrors, repo string) string {
	d := filepath.Join(mirrors, strings.Replace(repo, "/", "+", 1))
	for _, g := range []string{filepath.Join(d, "repo", ".git"), filepath.Join(d, "repo"), d} {
		if _, err := Git(ctx, g, nil, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
			return g
		}
	}
	return ""
}
