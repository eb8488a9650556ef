package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"reasonix.io/plugind/internal/parity"
)

// placeholderFlags collects repeated -placeholder OLD=NEW flags.
type placeholderFlags parity.Placeholders

func (p *placeholderFlags) String() string { return fmt.Sprint(len(*p)) }

func (p *placeholderFlags) Set(v string) error {
	old, repl, ok := strings.Cut(v, "=")
	if !ok || old == "" {
		return fmt.Errorf("-placeholder wants OLD=NEW, got %q", v)
	}
	*p = append(*p, struct{ Old, New string }{old, repl})
	return nil
}

// goldensCmd is `sidebyside goldens`: after bench/claude-side-by-side.sh
// --goldens ran Claude Code over a marketplace (install, details, list), it
// writes one golden per entry Claude tried (internal/parity).
func goldensCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("goldens", flag.ContinueOnError)
	market := fs.String("market", "", "the marketplace.json Claude installed from")
	logs := fs.String("claude-logs", "", "directory of NAME.rc/NAME.log (install) and NAME.details.rc/NAME.details (details)")
	list := fs.String("list", "", "the output of `claude plugin list --json` after the installs")
	version := fs.String("claude-version", "", "`claude --version`")
	source := fs.String("source", "", "what the marketplace was added from (OWNER/REPO@COMMIT, or a module-relative folder)")
	harness := fs.String("harness", "", "the command line that ran the harness")
	add := fs.String("add", "", "the `claude plugin marketplace add …` command")
	out := fs.String("out", "", "the folder to write the goldens into")
	session := fs.String("session", "", "the output of a session after the installs (`"+parity.SessionCommand+"`); optional")
	var ph placeholderFlags
	fs.Var(&ph, "placeholder", "OLD=NEW: replace a run-specific path in Claude's messages (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for name, v := range map[string]string{"-market": *market, "-claude-logs": *logs, "-list": *list,
		"-claude-version": *version, "-source": *source, "-harness": *harness, "-add": *add, "-out": *out} {
		if v == "" {
			return fmt.Errorf("goldens: %s is required", name)
		}
	}
	entries, mkt, err := readEntries(*market)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(*list)
	if err != nil {
		return fmt.Errorf("goldens: %w", err)
	}
	listed, err := parity.ParseList(data)
	if err != nil {
		return err
	}
	rec := &parity.Recording{
		Marketplace: mkt, Claude: *version, Source: *source, Harness: *harness, AddCommand: *add,
		Logs: *logs, List: listed, Placeholders: parity.Placeholders(ph),
	}
	if *session != "" {
		data, err := os.ReadFile(*session)
		if err != nil {
			return fmt.Errorf("goldens: %w", err)
		}
		if rec.Sessions, err = parity.ParseSession(data); err != nil {
			return fmt.Errorf("goldens: %s: %w", *session, err)
		}
	}
	var goldens []*parity.Golden
	var names []string
	var problems []error
	for _, e := range entries {
		names = append(names, e.Name)
		if !rec.Tried(e.Name) {
			continue
		}
		g, err := rec.Golden(e.Name)
		if errors.Is(err, parity.ErrHarness) {
			fmt.Fprintln(stdout, err)
			continue
		}
		if err != nil {
			problems = append(problems, err)
			continue
		}
		goldens = append(goldens, g)
	}
	if err := parity.WriteGoldens(*out, goldens, names); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "goldens: %d of %d entries of %s written to %s\n", len(goldens), len(entries), mkt, *out)
	return errors.Join(problems...)
}
