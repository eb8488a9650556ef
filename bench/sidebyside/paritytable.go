package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"reasonix.io/plugind/internal/parity"
)

// parityTableCmd is `sidebyside paritytable -results DIR`: the parity
// table of issue 22 from the results the parity tests write
// (REASONIX_PARITY_RESULTS=DIR go test ./cmd/reasonix -run TestParity):
// one row per marketplace, a total, and how often each kind of difference
// occurs.
func parityTableCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("paritytable", flag.ContinueOnError)
	dir := fs.String("results", "", "the folder of MARKETPLACE.json results")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("paritytable: -results is required")
	}
	files, err := filepath.Glob(filepath.Join(*dir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("paritytable: no results in %s", *dir)
	}
	sort.Strings(files)
	fmt.Fprintln(stdout, "| marketplace | entries with goldens | both installed | inventory equal | equal but for allowed | different | blocked by reasonix only | refused by Claude only | neither |")
	fmt.Fprintln(stdout, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	var all []parity.Result
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var results []parity.Result
		if err := json.Unmarshal(data, &results); err != nil {
			return fmt.Errorf("paritytable: %s: %w", f, err)
		}
		all = append(all, results...)
		writeTallyRow(stdout, strings.TrimSuffix(filepath.Base(f), ".json"), parity.Count(results))
	}
	writeTallyRow(stdout, "**total**", parity.Count(all))
	kinds := map[string]int{}
	for _, r := range all {
		for _, d := range r.Differences {
			kinds[differenceKind(d)]++
		}
	}
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return kinds[keys[i]] > kinds[keys[j]] || kinds[keys[i]] == kinds[keys[j]] && keys[i] < keys[j]
	})
	fmt.Fprintln(stdout, "\n| difference | entries |\n|---|---:|")
	for _, k := range keys {
		fmt.Fprintf(stdout, "| %s | %d |\n", k, kinds[k])
	}
	return nil
}

func writeTallyRow(w io.Writer, name string, t parity.Tally) {
	fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %d |\n",
		name, t.Entries, t.Both, t.Equal, t.EqualAllowed, t.Different, t.OnlyClaude, t.OnlyReasonix, t.Neither)
}

// These drop the names a difference lists and Claude's reason, so
// differences of one kind count together.
var (
	afterHas    = regexp.MustCompile(`(only (Claude|reasonix) has): .*`)
	claudeWhy   = regexp.MustCompile(`Claude refuses it \((install failed|failed to load): ([^:(\[]*).*\), reasonix`)
	displayName = regexp.MustCompile(`display name: .*`)
	enabled     = regexp.MustCompile(`enabled: .*`)
)

func differenceKind(d string) string {
	d = afterHas.ReplaceAllString(d, "$1 …")
	d = claudeWhy.ReplaceAllString(d, "Claude refuses it ($1: $2…), reasonix")
	d = displayName.ReplaceAllString(d, "display name differs")
	return enabled.ReplaceAllString(d, "enabled differs")
}
