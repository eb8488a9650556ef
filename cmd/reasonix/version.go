package main

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/resolver/host"
)

// version is set at link time for releases (-ldflags "-X main.version=v1.2.3");
// a build from a checkout says what the build info knows.
var version = ""

// versionLine is what `reasonix version` and `--version` print: the
// version, the commit and its date (from the VCS stamp Go writes into
// builds from a checkout), and the Go version.
func versionLine() string {
	v, commit, date, dirty := version, "unknown", "unknown", false
	if info, ok := debug.ReadBuildInfo(); ok {
		v = cmp.Or(v, info.Main.Version)
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	commit = host.Short(commit)
	if dirty {
		commit += "+dirty"
	}
	return fmt.Sprintf("reasonix %s (commit %s, built %s, %s %s/%s)", v, commit, date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func (m *Main) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit, build date and Go version",
		Example: "  reasonix version\n  reasonix --version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if m.asJSON {
				return writeJSON(m.Stdout, map[string]string{"version": versionLine()})
			}
			_, err := fmt.Fprintln(m.Stdout, versionLine())
			return err
		},
	}
}
