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

	// terminal, when set, says whether w is a terminal (tests); nil checks
	// the file descriptor.
	terminal func(w io.Writer) bool
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

// Run executes args and returns the process exit status.
func (m *Main) Run(ctx context.Context, args []string) int {
	root := m.rootCommand()
	root.SetArgs(args)
	root.SetIn(m.Stdin)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
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
		Use:           "reasonix",
		Short:         "Resolve, pin, install and serve Reasonix plugin packages",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(err) })
	plugin := &cobra.Command{Use: "plugin", Short: "Install and manage plugin packages"}
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
	doctor := &cobra.Command{Use: "doctor", Short: "Workspace diagnostics"}
	doctor.AddCommand(m.capabilitiesCommand())
	root.AddCommand(plugin, doctor, m.cacheCommand(), m.marketplaceCommand())
	root.AddCommand(m.serveCommand(), m.studioCommand(), m.mirrorCommand())
	return root
}

// memoryLimit is the soft heap limit the process runs under (unless
// GOMEMLIMIT says otherwise): SPEC §14 wants any install under 64 MiB of
// RSS, and garbage the collector has not yet reclaimed counts too. The
// limit makes it collect sooner as the heap nears it; it never fails an
// allocation.
const memoryLimit = 40 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	stopProfiles := startProfiles(os.Getenv, os.Stderr)
	code := m.Run(ctx, os.Args[1:])
	stopProfiles()
	stop()
	os.Exit(code)
}
