// Command corpustable prints how every marketplace document of the
// real-world corpus classifies: per file, ready / skipped / error counts and
// the kinds behind the skips and errors.
//
//	go run ./bench/corpustable [-corpus DIR]
//
// DIR defaults to $REASONIX_CORPUS (a relative value is the module root's,
// as in the tests); a positional DIR is still accepted.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/marketplace"
)

func main() {
	root, err := corpusRoot(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpustable:", err)
		os.Exit(2)
	}
	var docs []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.Base(p), "marketplace") && strings.HasSuffix(p, ".json") && !strings.Contains(p, "_schemas") {
			docs = append(docs, p)
		}
		return nil
	})
	sort.Strings(docs)
	fmt.Println("| file | entries | ready | skipped (why) | error (why) |")
	fmt.Println("|---|---:|---:|---|---|")
	for _, p := range docs {
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Printf("| %s | read error: %v |\n", rel, err)
			continue
		}
		doc := marketplace.ClaudeDocument
		if strings.HasPrefix(filepath.Base(p), "codex-") {
			doc = marketplace.CodexDocument
		}
		m, err := doc.Parse(data, marketplace.Options{})
		if err != nil {
			fmt.Printf("| %s | — | — | — | document: %s |\n", rel, err)
			continue
		}
		ready, skipped, errored := m.Counts()
		skips, errs := map[string]int{}, map[string]int{}
		for _, e := range m.Entries {
			switch e.Status {
			case marketplace.StatusSkipped:
				skips[why(e)]++
			case marketplace.StatusError:
				errs[why(e)]++
			}
		}
		fmt.Printf("| %s | %d | %d | %d %s | %d %s |\n", rel, len(m.Entries), ready, skipped, tally(skips), errored, tally(errs))
	}
}

// corpusRoot reads -corpus (or one positional directory), defaulting to
// REASONIX_CORPUS.
func corpusRoot(args []string) (string, error) {
	fl := flag.NewFlagSet("corpustable", flag.ContinueOnError)
	env, _, err := fakegithub.LookupCorpus()
	if err != nil {
		return "", err
	}
	dir := fl.String("corpus", env, "the corpus directory (default $"+fakegithub.CorpusEnv+")")
	if err := fl.Parse(args); err != nil {
		return "", err
	}
	switch {
	case fl.NArg() > 1:
		return "", fmt.Errorf("one corpus directory at most, got %q", fl.Args())
	case fl.NArg() == 1:
		*dir = fl.Arg(0)
	}
	if *dir == "" {
		return "", fmt.Errorf("no corpus: set %s or pass -corpus DIR", fakegithub.CorpusEnv)
	}
	info, err := os.Stat(*dir)
	if err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("corpus %s is not a directory", *dir)
	}
	return *dir, nil
}

// why names the reason class of a skipped or refused entry.
func why(e marketplace.Entry) string {
	r := e.Reason
	switch {
	case strings.Contains(r, "strict"):
		return "strict:false"
	case strings.Contains(r, "no \"sha\" pin"):
		return string(e.Kind) + " without sha"
	case strings.Contains(r, "not a GitHub"):
		return "non-GitHub url"
	case strings.Contains(r, "duplicate") || strings.Contains(r, "also named"):
		return "duplicate name"
	}
	return string(e.Kind)
}

func tally(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	return "(" + strings.Join(parts, ", ") + ")"
}
