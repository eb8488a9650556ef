package main

import (
	"time"

	"reasonix.io/plugind/internal/fakegithub"
)

// craftedMaxCPU is issue 21's bound on a crafted pack: indexed or refused
// within it.
const craftedMaxCPU = 2 * time.Second

// craftedCases are packs a hostile git host would answer a fetch with
// (issue 21), each beside a small plugin at the repository's root and each
// built only when its case runs: a chain of REF deltas stored last first
// (resolved pass after pass, 40,000 took 17-35 s), a million tiny objects
// (147 MB of RSS at 500,000), and both just under the object bound of a
// fetch of one commit (200,000 for the default budget), the most memory a
// pack the indexer accepts can take.
func craftedCases(fake *fakegithub.Server) []benchCase {
	plugin := map[string]string{
		".claude-plugin/plugin.json": `{"name":"crafted","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: crafted\n---\n",
	}
	// The plugin's commit, 2 blobs and 4 trees come first: 7 objects.
	const atBound = 200_000 - 7
	crafted := func(name, want string, extra func() []fakegithub.PackObject) benchCase {
		return benchCase{
			name: "crafted: " + name, source: "git:github.com/rss/" + fakeName(name), want: want,
			gitOnly: true, maxCPU: craftedMaxCPU,
			prepare: func() {
				repo := fake.CreateRepo("rss", fakeName(name))
				repo.ServeCraftedPack(repo.Commit("main", plugin), extra())
			},
		}
	}
	return []benchCase{
		crafted("reversed REF chain, 40,000", "ok", func() []fakegithub.PackObject { return fakegithub.ReversedDeltaChain(40_000) }),
		crafted("reversed REF chain, 400,000", "install.budget_exceeded", func() []fakegithub.PackObject { return fakegithub.ReversedDeltaChain(400_000) }),
		crafted("1,000,000 tiny objects", "install.budget_exceeded", func() []fakegithub.PackObject { return fakegithub.TinyBlobs(1_000_000) }),
		crafted("reversed REF chain at the bound", "ok", func() []fakegithub.PackObject { return fakegithub.ReversedDeltaChain(atBound - 1) }),
		crafted("tiny objects at the bound", "ok", func() []fakegithub.PackObject { return fakegithub.TinyBlobs(atBound) }),
	}
}

// fakeName turns a case name into a repository name.
func fakeName(name string) string {
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			out = append(out, c)
		case c == ' ' && len(out) > 0 && out[len(out)-1] != '-':
			out = append(out, '-')
		}
	}
	return string(out)
}
