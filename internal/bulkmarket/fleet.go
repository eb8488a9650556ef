package bulkmarket

import (
	"encoding/json"
	"fmt"

	"reasonix.io/plugind/internal/fakegithub"
)

// Fleet builds Build's plain sibling for the team mirror's fleet tests and
// benchmark (SPEC §15): repos repositories OWNER/repoNN holding entries
// plain plugins between them (entries/repos each), each repository with
// one commit, and a marketplace OWNER/market named OWNER listing every
// plugin as url+sha+path pinned to that commit. Their upstream counts per
// repository assume the one commit, and they build two fleets on one fake,
// under two owners. It returns the marketplace's source.
func Fleet(gh *fakegithub.Server, owner string, entries, repos int) (string, error) {
	var list []json.RawMessage
	for r := range repos {
		tree := []fakegithub.File{{Path: "README.md", Content: fmt.Sprintf("repository %d\n", r)}}
		var names []string
		for p := range entries / repos {
			names = append(names, fmt.Sprintf("p%03d-%02d", r, p))
			tree = append(tree, pluginFiles("plugins/"+names[p]+"/", names[p])...)
		}
		repo := gh.CreateRepo(owner, fmt.Sprintf("repo%02d", r))
		sha := repo.CommitTree("main", tree, true)
		for _, n := range names {
			src := fmt.Sprintf(`{"source":"url","url":%q,"sha":%q,"path":%q}`, "https://github.com/"+repo.Path(), sha, "plugins/"+n)
			list = append(list, entry(n, json.RawMessage(src), false))
		}
	}
	doc, err := document(owner, list)
	if err != nil {
		return "", err
	}
	gh.CreateRepo(owner, "market").CommitTree("main", []fakegithub.File{{Path: ".claude-plugin/marketplace.json", Content: doc}}, true)
	return "https://github.com/" + owner + "/market", nil
}
