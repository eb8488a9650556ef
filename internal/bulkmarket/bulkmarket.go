// Package bulkmarket builds synthetic marketplaces on the fake GitHub
// (internal/fakegithub) for the benchmarks and the tests that need many
// entries over many repositories: bench/bulk (SPEC §14's bulk install),
// bench/rss (peak memory on a large marketplace), the API budget tests
// (issue 23), and, with Fleet, bench/mirror and the team mirror's fleet
// tests. One generator, so a number measured by one is a number about
// the same marketplace in the others.
//
// The marketplace repository bulk/market holds the relative entries' plugins;
// the other entries point, round robin, into the plugin repositories
// bulk/repoNNN, each holding several plugins under plugins/NAME/ and a
// README. Every plugin repository has two commits; entries pin the first (not
// a branch tip: reachability must be proven) in even repositories and the
// second (main's tip) in odd ones. Entry kinds rotate by repository as in
// real marketplaces: github+sha+path, url+sha+path, git-subdir with ref and
// sha (the ref a tag on the pinned commit), url+sha+path with a ".git" URL.
//
// A Rich marketplace looks like the large real ones (a 269-entry marketplace
// of the corpus is the model): entries with long descriptions, keywords,
// authors and categories; plugins of about twenty files (skills with
// references, commands, agents, scripts); and, beside the plugins, what such
// a repository also carries — backup copies of every plugin (near
// duplicates, so git packs them as deltas), planned skills, documentation
// and large JSON catalogs — about 14,000 files in 10,000 folders and
// 40 MiB for 269 entries, 200 of them in the marketplace's repository.
package bulkmarket

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"reasonix.io/plugind/internal/fakegithub"
)

// Shape is the marketplace to build.
type Shape struct {
	Entries int // marketplace entries, 1 to 1,000
	Repos   int // plugin repositories besides the marketplace's own
	// Relative is how many entries live in the marketplace's repository;
	// 0 means Entries/5.
	Relative int
	Rich     bool
	// RepoFiles adds that many documentation files (about 3 KiB each, in
	// groups of sixteen revisions of a page) beside the plugins of every
	// plugin repository: large repositories whose packs are mostly deltas,
	// which weigh on a git fetch.
	RepoFiles int
}

func (sh Shape) relative() int {
	if sh.Relative > 0 {
		return sh.Relative
	}
	return sh.Entries / 5
}

func (sh Shape) check() error {
	rel := sh.relative()
	switch {
	case sh.Entries < 1 || sh.Entries > 1000:
		return fmt.Errorf("bulkmarket: want 1 to 1000 entries, got %d", sh.Entries)
	case rel > sh.Entries:
		return fmt.Errorf("bulkmarket: %d relative entries of %d", rel, sh.Entries)
	case sh.Entries > rel && (sh.Repos < 1 || sh.Repos > sh.Entries-rel):
		return fmt.Errorf("bulkmarket: want 1 to %d plugin repositories for %d remote entries, got %d", sh.Entries-rel, sh.Entries-rel, sh.Repos)
	}
	return nil
}

// Target is a repository at the commit the marketplace pins (or, for the
// marketplace itself, its head).
type Target struct {
	Repo *fakegithub.Repo
	SHA  string
}

// Market is a built marketplace.
type Market struct {
	// Source is what to install: the marketplace repository's URL.
	Source string
	// Targets are every plugin repository at its pinned commit, then the
	// marketplace repository: what a floor downloads.
	Targets []Target
	// Entries is the number of entries of its document.
	Entries int
}

// Build makes the marketplace of shape sh on gh.
func Build(gh *fakegithub.Server, sh Shape) (*Market, error) {
	if err := sh.check(); err != nil {
		return nil, err
	}
	relative := sh.relative()
	remote := sh.Entries - relative
	names := make([][]string, max(sh.Repos, 0))
	for i := 0; i < remote; i++ {
		r := i % sh.Repos
		names[r] = append(names[r], fmt.Sprintf("p%03d-%02d", r, len(names[r])))
	}
	files := pluginFiles
	if sh.Rich {
		files = richPluginFiles
	}
	type built struct {
		repo *fakegithub.Repo
		pin  string
	}
	out := make([]built, len(names))
	var g errgroup.Group
	g.SetLimit(4)
	for r := range names {
		g.Go(func() error {
			repo, err := createRepo(gh, fmt.Sprintf("repo%03d", r))
			if err != nil {
				return err
			}
			tree := []fakegithub.File{
				{Path: "README.md", Content: "# Plugins of repository " + strconv.Itoa(r) + "\n"},
				{Path: "LICENSE", Content: "MIT License\n\nCopyright (c) bulk benchmark\n"},
			}
			for _, n := range names[r] {
				tree = append(tree, files("plugins/"+n+"/", n)...)
			}
			for i := 0; i < sh.RepoFiles; i++ {
				name := fmt.Sprintf("docs/%02d/%04d.md", i%64, i)
				// Pages in revisions: sixteen near copies of each, which git
				// stores as deltas on one another (bases a pack index keeps).
				page := prose(fmt.Sprintf("repo %d page %d", r, i/16), 3000)
				tree = append(tree, fakegithub.File{Path: name, Content: page + fmt.Sprintf("\n\nRevision %d of %s.\n", i%16, name)})
			}
			first := repo.CommitTree("main", tree, true)
			second := repo.Commit("main", map[string]string{"README.md": "# Plugins of repository " + strconv.Itoa(r) + "\n\nNow with a second commit.\n"})
			pin := second
			if r%2 == 0 {
				pin = first // not a tip: reachability has to be proven
			}
			if r%4 == 2 {
				repo.Tag("v1.0", pin)
			}
			out[r] = built{repo, pin}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	m := &Market{Entries: sh.Entries}
	var list []json.RawMessage
	for r, b := range out {
		m.Targets = append(m.Targets, Target{b.repo, b.pin})
		url := "https://github.com/" + b.repo.Path()
		for _, n := range names[r] {
			var src string
			switch r % 4 {
			case 0:
				src = fmt.Sprintf(`{"source":"github","repo":%q,"sha":%q,"path":%q}`, b.repo.Path(), b.pin, "plugins/"+n)
			case 1:
				src = fmt.Sprintf(`{"source":"url","url":%q,"sha":%q,"path":%q}`, url, b.pin, "plugins/"+n)
			case 2:
				src = fmt.Sprintf(`{"source":"git-subdir","url":%q,"path":%q,"ref":"v1.0","sha":%q}`, url+".git", "plugins/"+n, b.pin)
			default:
				src = fmt.Sprintf(`{"source":"url","url":%q,"sha":%q,"path":%q}`, url+".git", b.pin, "plugins/"+n)
			}
			list = append(list, entry(n, json.RawMessage(src), sh.Rich))
		}
	}
	var mfiles []fakegithub.File
	for i := 0; i < relative; i++ {
		n := fmt.Sprintf("local%03d", i)
		dir := "plugins/" + n + "/"
		if sh.Rich {
			dir = "plugins/" + category(n) + "/" + n + "/"
		}
		mfiles = append(mfiles, files(dir, n)...)
		src, _ := json.Marshal("./" + strings.TrimSuffix(dir, "/"))
		list = append(list, entry(n, src, sh.Rich))
	}
	if sh.Rich {
		mfiles = append(mfiles, richExtras(mfiles, list)...)
	}
	doc, err := document("bulk", list)
	if err != nil {
		return nil, err
	}
	mfiles = append(mfiles, fakegithub.File{Path: ".claude-plugin/marketplace.json", Content: doc},
		fakegithub.File{Path: "README.md", Content: "# Bulk benchmark marketplace\n"})
	mk, err := createRepo(gh, "market")
	if err != nil {
		return nil, err
	}
	msha := mk.CommitTree("main", mfiles, true)
	m.Targets = append(m.Targets, Target{mk, msha})
	m.Source = "https://github.com/" + mk.Path()
	return m, nil
}

// createRepo makes bulk/NAME, or says that it exists already (a second
// marketplace on the same fake needs another server).
func createRepo(gh *fakegithub.Server, name string) (*fakegithub.Repo, error) {
	if gh.Repo("bulk", name) != nil {
		return nil, errors.New("bulkmarket: bulk/" + name + " exists already on this server: build one marketplace per fake")
	}
	return gh.CreateRepo("bulk", name), nil
}

// document is the marketplace document called name, one entry a line (as
// real ones are, more or less).
func document(name string, list []json.RawMessage) (string, error) {
	var b strings.Builder
	b.WriteString(`{"name":` + strconv.Quote(name) + `,"owner":{"name":"Bulk"},"description":"synthetic bulk benchmark marketplace","plugins":[` + "\n")
	for i, e := range list {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.Write(e)
	}
	b.WriteString("\n]}\n")
	if !json.Valid([]byte(b.String())) {
		return "", errors.New("bulkmarket: the generated document is not JSON")
	}
	return b.String(), nil
}

// entry is one entry of the document.
func entry(name string, src json.RawMessage, rich bool) json.RawMessage {
	e := map[string]any{"name": name, "description": "bulk plugin", "source": src}
	if rich {
		e = richEntry(name, src)
	}
	data, _ := json.Marshal(e)
	return data
}

// pluginFiles are the four files of a plain plugin below prefix: manifest,
// skill, command, agent.
func pluginFiles(prefix, name string) []fakegithub.File {
	body := strings.Repeat("Step "+name+": read the request, check the inputs, then act.\n", 24)
	return []fakegithub.File{
		{Path: prefix + ".claude-plugin/plugin.json", Content: `{"name":"` + name + `","version":"1.0.0","description":"bulk benchmark plugin ` + name + `"}` + "\n"},
		{Path: prefix + "skills/" + name + "/SKILL.md", Content: "---\nname: " + name + "\ndescription: Benchmark skill of " + name + ". Use when asked about " + name + ".\n---\n\n" + body},
		{Path: prefix + "commands/" + name + ".md", Content: "---\ndescription: Benchmark command of " + name + "\n---\n\nRun " + name + " with $ARGUMENTS.\n"},
		{Path: prefix + "agents/" + name + ".md", Content: "---\nname: " + name + "-agent\ndescription: Benchmark agent of " + name + "\n---\n\n" + body},
	}
}
