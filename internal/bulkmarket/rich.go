package bulkmarket

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"reasonix.io/plugind/internal/fakegithub"
)

// The rich shape's text is made of words drawn from a small vocabulary by a
// generator seeded with the file's name: deterministic (the same marketplace
// on every run, so the same digests), and about as compressible as prose,
// so archives and packs weigh what real ones do.
var vocabulary = strings.Fields(`the a an and or of to in for with on by from as at into over under
validate generate analyze review deploy monitor audit migrate refactor document test benchmark
configure provision secure scan report summarize translate optimize schedule notify index search
plugin skill command agent hook server workflow pipeline repository branch commit release tag
database schema query cache queue stream event metric trace log alert dashboard incident
kubernetes terraform docker python typescript golang rust java react vue nextjs django rails
api endpoint request response token credential secret policy compliance accessibility performance
consistency quality coverage regression dependency vulnerability license changelog roadmap
user team project customer product service platform cloud cluster region network storage
quickly safely reliably automatically incrementally carefully thoroughly consistently
checks finds fixes explains builds writes reads compares detects suggests enforces tracks`)

var categories = []string{"productivity", "security", "devops", "testing", "documentation", "data", "ai-ml", "frontend", "backend", "database"}

func seeded(key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	return rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
}

// prose is about n bytes of sentences seeded by key.
func prose(key string, n int) string {
	r := seeded(key)
	var b strings.Builder
	b.Grow(n + 80)
	for b.Len() < n {
		words := 8 + r.IntN(12)
		for i := 0; i < words; i++ {
			w := vocabulary[r.IntN(len(vocabulary))]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(".")
		if r.IntN(5) == 0 {
			b.WriteString("\n\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func category(name string) string { return categories[seeded("category "+name).IntN(len(categories))] }

func keywords(name string) []string {
	r := seeded("keywords " + name)
	out := make([]string, 12+r.IntN(8))
	for i := range out {
		out[i] = vocabulary[r.IntN(len(vocabulary))] + "-" + vocabulary[r.IntN(len(vocabulary))]
	}
	return out
}

// richEntry is a marketplace entry as large real marketplaces write them.
func richEntry(name string, src json.RawMessage) map[string]any {
	return map[string]any{
		"name":        name,
		"source":      src,
		"description": strings.TrimSpace(prose("description "+name, 280)),
		"version":     "1.0.0",
		"category":    category(name),
		"keywords":    keywords(name),
		"author":      map[string]string{"name": "Bulk Benchmark", "email": "bench@example.com"},
		"homepage":    "https://example.com/plugins/" + name,
		"license":     "MIT",
	}
}

// richPluginFiles are a plugin of twenty-two files below prefix: manifest,
// README, three skills with three references each, four commands, two
// agents and two executable scripts (about 60 KiB).
func richPluginFiles(prefix, name string) []fakegithub.File {
	manifest, _ := json.Marshal(map[string]any{
		"name": name, "version": "1.0.0", "description": strings.TrimSpace(prose("description "+name, 280)),
		"author": map[string]string{"name": "Bulk Benchmark"}, "keywords": keywords(name), "license": "MIT",
	})
	files := []fakegithub.File{
		{Path: prefix + ".claude-plugin/plugin.json", Content: string(manifest) + "\n"},
		{Path: prefix + "README.md", Content: "# " + name + "\n\n" + prose("readme "+name, 4000)},
	}
	for i := 1; i <= 3; i++ {
		skill := fmt.Sprintf("%s-skill-%d", name, i)
		files = append(files, fakegithub.File{Path: prefix + "skills/" + skill + "/SKILL.md",
			Content: "---\nname: " + skill + "\ndescription: " + strings.TrimSpace(prose("skill description "+skill, 160)) + "\n---\n\n" + prose("skill "+skill, 5000)})
		for _, ref := range []string{"guide", "examples", "api"} {
			files = append(files, fakegithub.File{Path: prefix + "skills/" + skill + "/references/" + ref + ".md",
				Content: "# " + ref + "\n\n" + prose(ref+" "+skill, 2500)})
		}
	}
	for _, c := range []string{"run", "check", "report", "setup"} {
		files = append(files, fakegithub.File{Path: prefix + "commands/" + c + ".md",
			Content: "---\ndescription: " + c + " with " + name + "\n---\n\n" + prose("command "+c+" "+name, 1200) + "\n\nRun with $ARGUMENTS.\n"})
	}
	for _, a := range []string{"reviewer", "planner"} {
		files = append(files, fakegithub.File{Path: prefix + "agents/" + a + ".md",
			Content: "---\nname: " + name + "-" + a + "\ndescription: The " + a + " of " + name + "\n---\n\n" + prose("agent "+a+" "+name, 2500)})
	}
	for _, s := range []string{"setup", "validate"} {
		files = append(files, fakegithub.File{Path: prefix + "scripts/" + s + ".sh", Mode: 0o755,
			Content: "#!/bin/sh\n# " + s + " for " + name + "\nset -eu\necho '" + strings.ReplaceAll(prose("script "+s+" "+name, 600), "'", "") + "'\n"})
	}
	return files
}

// richExtras is what a large marketplace repository holds beside its
// plugins: two dated backup copies of every plugin file with one line
// changed (near duplicates, which git stores as deltas), skills planned
// but not yet in a plugin (two per entry), documentation, and JSON catalogs
// of the whole marketplace, the largest about 2 MiB.
func richExtras(plugins []fakegithub.File, list []json.RawMessage) []fakegithub.File {
	var out []fakegithub.File
	for _, date := range []string{"2025-10-19", "2025-10-20"} {
		for _, f := range plugins {
			rest, ok := strings.CutPrefix(f.Path, "plugins/")
			if !ok {
				continue
			}
			out = append(out, fakegithub.File{Path: "backups/" + date + "/" + rest, Mode: f.Mode,
				Content: strings.Replace(f.Content, "\n", "\n<!-- backup of "+date+" -->\n", 1)})
		}
	}
	for i := 0; i < 2*len(list); i++ {
		name := fmt.Sprintf("planned-skills/skill-%04d/SKILL.md", i)
		out = append(out, fakegithub.File{Path: name, Content: "---\nname: skill-" + fmt.Sprint(i) + "\ndescription: planned\n---\n\n" + prose(name, 3000)})
	}
	for i := 0; i < 80; i++ {
		name := fmt.Sprintf("000-docs/%03d-notes.md", i)
		out = append(out, fakegithub.File{Path: name, Content: prose(name, 8000)})
	}
	catalog := "[\n" + strings.Join(rawStrings(list), ",\n") + "\n]\n"
	out = append(out,
		fakegithub.File{Path: "marketplace/src/data/catalog.json", Content: catalog},
		fakegithub.File{Path: "marketplace/src/data/skills-catalog.json", Content: "[" + strings.TrimSuffix(strings.Repeat(catalog+",", 12), ",") + "]\n"},
	)
	return out
}

func rawStrings(list []json.RawMessage) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = string(e)
	}
	return out
}
