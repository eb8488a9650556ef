// Command reasonix resolves, installs and manages Reasonix plugin packages,
// and serves the same backend to Studio (`reasonix serve`). This package only
// parses flags and prints; the work is done by the installer and friends.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"
)

// Main is one run of the program, with its streams and environment, so tests
// can drive it in-process as well as through the built binary.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Prog is how the user ran this binary, for the commands a review
	// suggests: "./reasonix" when run by a relative path (so pasting the
	// suggestion runs the same binary); "" means "reasonix".
	Prog string
	// terminal, when set, says whether w is a terminal (tests); nil checks
	// the file descriptor.
	terminal func(w io.Writer) bool
	// columns, when set, is the terminal's width (tests); 0 asks it.
	columns int

	// Flags every command takes: --json (a no-op where the output is JSON
	// anyway) and -v/--verbose (debug logs on stderr).
	asJSON  bool
	verbose bool
	args    []string // the command line, for the root's own errors
	// relativeHome is REASONIX_HOME as given when it was relative: it is
	// made absolute once, when the run starts, and said.
	relativeHome string
}

// exitError carries an exit status through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// usageError is an exit-2 error: the command line itself was wrong.
func usageError(err error) error { return &exitError{code: 2, err: err} }

// errFailed is an exit-1 error whose details were already printed.
var errFailed = &exitError{code: 1}

// errInterrupted is the exit status of an interrupted command (130, as a
// shell reports SIGINT), details already printed.
var errInterrupted = &exitError{code: 130}

// Run executes args and returns the process exit status.
func (m *Main) Run(ctx context.Context, args []string) int {
	m.args = args
	m.absoluteHome()
	root := m.rootCommand()
	root.SetArgs(args)
	root.SetIn(m.Stdin)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	ee, exit := errors.AsType[*exitError](err)
	if ctx.Err() != nil {
		// Interrupted: whatever failed, it failed because it was stopped.
		if !exit || ee.err != nil {
			fmt.Fprintln(m.Stderr, "reasonix: interrupted")
		}
		return 130
	}
	if exit {
		if ee.err != nil {
			fmt.Fprintln(m.Stderr, "reasonix:", safeText(ee.err.Error()))
		}
		return ee.code
	}
	// Anything cobra itself rejects (unknown flag, wrong arg count) is usage;
	// its message quotes the command line, which may hold a credential.
	fmt.Fprintln(m.Stderr, "reasonix:", safeText(err.Error()))
	return 2
}

func (m *Main) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "reasonix",
		Short: "Resolve, pin, install and serve Reasonix plugin packages",
		Long: `reasonix resolves plugin-package sources (GitHub and any git host, marketplaces, local folders,
zips), pins every remote one to a commit, keeps what it fetched in a cache and a snapshot store,
and installs from there with an approval step. Everything lives under $REASONIX_HOME (default
~/.reasonix); "reasonix help environment" lists the variables it reads.`,
		Example: `  reasonix plugin install https://github.com/anthropics/claude-plugins-official --dry-run
  reasonix plugin install hello@acme --yes
  reasonix plugin list
  reasonix studio`,
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SuggestionsMinimumDistance = 2
	// The root reads its own words like a group does (see group), but it
	// parses flags (--version, --json, -v): an unknown word before an
	// unknown flag is still an unknown command, with a suggestion.
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError(errors.New(unknownCommand(cmd, args[0])))
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if !c.HasParent() {
			if word := firstWord(m.args); word != "" {
				return usageError(errors.New(unknownCommand(c, word)))
			}
		}
		return flagError(c, err)
	})
	pf := root.PersistentFlags()
	pf.BoolVar(&m.asJSON, "json", false, "print JSON (what install, update and remove print anyway)")
	pf.BoolVarP(&m.verbose, "verbose", "v", false, "show debug logs on stderr (retries, cache decisions)")
	plugin := group(&cobra.Command{Use: "plugin", Short: "Install and manage plugin packages",
		Example: `  reasonix plugin install ./my-plugin --dry-run
  reasonix plugin list
  reasonix plugin update --all --dry-run`})
	plugin.AddCommand(
		m.installCommand(),
		m.updateCommand(),
		m.listCommand(),
		m.showCommand(),
		m.doctorCommand(),
		m.enableCommand(true),
		m.enableCommand(false),
		m.removeCommand(),
		m.pruneCommand(),
		m.exportCommand(),
		m.validateCommand(),
	)
	doctor := group(&cobra.Command{Use: "doctor", Short: "Workspace diagnostics",
		Example: `  reasonix doctor capabilities
  reasonix doctor capabilities --json`})
	doctor.AddCommand(m.capabilitiesCommand())
	root.AddCommand(plugin, doctor, m.cacheCommand(), m.marketplaceCommand(), m.lockCommand(), m.syncCommand())
	root.AddCommand(m.serveCommand(), m.studioCommand(), m.mirrorCommand())
	root.AddCommand(m.versionCommand(), environmentTopic(), m.completionCommand(root))
	return root
}

// memoryLimit is the soft limit of the Go runtime's memory (heap with its
// garbage, stacks, metadata) unless GOMEMLIMIT says otherwise. SPEC §14
// wants any install under 64 MiB of RSS, and the Go runtime has only part
// of it. Measured on the large marketplaces of issue 23 (bench/rss), at the
// peak: the binary's own pages are 26 to 29 MiB of RSS (code and read-only
// data, which the kernel maps in large folios: "reasonix version" alone
// peaks at 29 MiB), SQLite, the C library and thread stacks 3 to 5 MiB;
// 30 MiB is what is left, with a little to spare. It is a backstop, not
// what keeps the heap small: the live heap of the largest plans peaks at 14
// to 17 MiB (a 14,000-file tree being written), so the collector is never
// starved, and their CPU time is the same at 30 and 40 MiB (most of it is
// writing files). At 40 MiB, with the parser buffers and the SQLite
// caches fixed, the 1,000-entry plan still peaked at 61-64 MiB, Go holding
// freed pages it had no reason to return. The limit makes the collector
// run sooner and return freed pages as memory nears it; it never fails an
// allocation.
const memoryLimit = 30 << 20

// gcPercent is the collector's pace (GOGC), where the runtime's default
// is 100. A command's live heap is small (2 to 4 MiB on a warm re-plan of
// 300 entries) and it exits soon: at 100 it collects five times in 60 ms,
// some 15% of a warm re-plan's CPU, all of it for garbage the exit would
// free (issue 24). The memory limit above still bounds what a large plan,
// or the daemon, which runs under the same pace, holds.
const gcPercent = 400

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Prog: progName(os.Args[0])}
	stopProfiles := startProfiles(os.Getenv, os.Stderr)
	code := m.Run(ctx, os.Args[1:])
	stopProfiles()
	stop()
	os.Exit(code)
}

// absoluteHome makes a relative REASONIX_HOME absolute, once, for the whole
// run: every part of it then names the same home, and the warning the
// backend adds (see openWith) says which.
func (m *Main) absoluteHome() {
	h := m.Getenv("REASONIX_HOME")
	if h == "" || filepath.IsAbs(h) {
		return
	}
	abs, err := filepath.Abs(h)
	if err != nil {
		return // the backend says why it cannot use it
	}
	getenv := m.Getenv
	m.relativeHome = h
	m.Getenv = func(k string) string {
		if k == "REASONIX_HOME" {
			return abs
		}
		return getenv(k)
	}
}
