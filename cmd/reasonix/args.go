package main

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"reasonix.io/plugind/internal/jsondoc"
)

// exactArgs is cobra.ExactArgs saying, in words, what the command needs
// ("plugin install needs SOURCE: …") rather than "accepts 1 arg(s),
// received 0".
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < n:
			return usageError(fmt.Errorf("%s needs %s (see '%s --help')", cmd.CommandPath(), what, cmd.CommandPath()))
		case len(args) > n:
			return usageError(fmt.Errorf("%s takes %s, not %d: %s (see '%s --help')", cmd.CommandPath(), plural(n, "argument"), len(args),
				strings.Join(jsondoc.QuoteEach(args[n:]), " "), cmd.CommandPath()))
		}
		return nil
	}
}

// unknownFlag matches pflag's "unknown flag: --name" and "unknown
// shorthand flag: 'x' in -xyz".
var unknownFlag = regexp.MustCompile(`^unknown (?:flag: --([^\s=]+)|shorthand flag: '(.)' in -\S+)`)

// flagError is a usage error for a flag cmd does not take, suggesting the
// flags it does take that are nearest to what was typed (the README
// promises "did you mean" for every mistake at every level).
func flagError(cmd *cobra.Command, err error) error {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return usageError(err)
	}
	typed := cmp.Or(m[1], m[2])
	if s := nearFlags(cmd, typed); len(s) > 0 {
		return usageError(fmt.Errorf("%s; did you mean %s? (see '%s --help')", err, strings.Join(s, " or "), cmd.CommandPath()))
	}
	return usageError(fmt.Errorf("%s (see '%s --help' for its flags)", err, cmd.CommandPath()))
}

// nearFlags are cmd's flags within two edits of typed, or that typed is a
// prefix or a squashed spelling of ("--dryrun", "--plan"), nearest first.
func nearFlags(cmd *cobra.Command, typed string) []string {
	type near struct {
		name string
		d    int
	}
	var found []near
	squash := func(s string) string { return strings.ReplaceAll(s, "-", "") }
	visit := func(f *pflag.Flag) {
		// Parsed, cmd's own flags hold the inherited ones too: each once.
		if f.Hidden || slices.ContainsFunc(found, func(n near) bool { return n.name == "--"+f.Name }) {
			return
		}
		d := levenshtein.ComputeDistance(typed, f.Name)
		switch {
		case squash(typed) == squash(f.Name), len(typed) > 2 && strings.HasPrefix(f.Name, typed):
			d = 0
		case d > 2 || d >= len(f.Name):
			return
		}
		found = append(found, near{"--" + f.Name, d})
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	slices.SortStableFunc(found, func(a, b near) int { return cmp.Compare(a.d, b.d) })
	var out []string
	for _, f := range found[:min(len(found), 2)] {
		out = append(out, f.name)
	}
	return out
}
