package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/internal/jsondoc"
)

// group makes c a command that only holds subcommands: alone it prints its
// help; with an unknown word it is a usage error (exit 2) that suggests the
// nearest subcommand, as the root does. Cobra on its own would print help
// and exit 0 for "plugin lsit", or complain about a flag of the command the
// user misspelled ("plugin isntall X --dry-run": unknown flag --dry-run),
// so a group reads its arguments itself.
func group(c *cobra.Command) *cobra.Command {
	c.DisableFlagParsing = true
	// Cobra sets this on the root only: "lsit" is two edits from "list".
	c.SuggestionsMinimumDistance = 2
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			return cmd.Help()
		}
		return usageError(errors.New(unknownCommand(cmd, args[0])))
	}
	return c
}

// unknownCommand says that word is not a subcommand of cmd, and what may
// have been meant.
func unknownCommand(cmd *cobra.Command, word string) string {
	if strings.HasPrefix(word, "-") {
		return fmt.Sprintf("%s needs a command before any flag (%s); run '%s --help' for the commands", cmd.CommandPath(), word, cmd.CommandPath())
	}
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		return msg + "; did you mean " + strings.Join(jsondoc.QuoteEach(s), " or ") + "?"
	}
	return msg + "; run '" + cmd.CommandPath() + " --help' for the commands"
}

// firstWord is the first argument that is not a flag ("" when none).
func firstWord(args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}
