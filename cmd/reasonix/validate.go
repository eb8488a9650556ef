package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/secrets"
)

func (m *Main) validateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE|DIR|SOURCE",
		Short: "Check a plugin or a marketplace the way Claude Code's `claude plugin validate` does",
		Long: `Validate a plugin or a marketplace and print its errors and warnings, each naming the JSON
field it is about. The structural rules are Claude Code's (claude plugin validate), so both tools
give the same verdict; Reasonix adds, as warnings, what its own installer would skip or refuse.
The same document tables drive install, so install refuses exactly what validate refuses.

  FILE    a plugin.json or marketplace.json (any path): that document, plus what Claude Code's
          validator reads beside it (declared component paths; the plugin.json of each "./" entry)
  DIR     a plugin or marketplace folder: also every plugin folder a marketplace lists, in full
  SOURCE  a remote source (git:github.com/OWNER/REPO, https://…): fetched like an install, every
          entry fetched too; an entry that cannot be fetched is a warning

--json prints {ok, target{kind, mode, path, commit?}, errors[{entry?, file?, path, message,
reasonixInstalls?}], warnings[{…, reasonixRefuses?}], checked[{kind, entry?, name?, file?, note?}]}:
path is the JSON field a finding is about ("" for the whole document), file the document it is in
when it is not the one given, entry the marketplace entry ("plugins[3]") whose plugin it belongs
to. Where Reasonix differs from Claude Code on purpose the finding says how: reasonixInstalls on an
error Reasonix installs anyway (with a warning), reasonixRefuses on a warning for what Reasonix
refuses or skips. Install refuses exactly the errors without reasonixInstalls and the warnings with
reasonixRefuses.

Exit status: 0 when there are no errors (warnings allowed), 1 when there are, 2 on usage errors.`,
		Example: `  reasonix plugin validate ./my-plugin
  reasonix plugin validate .claude-plugin/marketplace.json
  reasonix plugin validate https://github.com/OWNER/REPO --json`,
		Args: exactArgs(1, "a FILE, a DIR or a SOURCE to check"),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := installer.Validate(cmd.Context(), args[0], installer.ValidateOptions{
				Offline: m.Getenv("REASONIX_OFFLINE") == "1",
				Open: func(ctx context.Context) (*installer.Installer, func(), error) {
					a, err := m.open(ctx)
					if err != nil {
						return nil, nil, err
					}
					return a.Installer, func() { a.Close() }, nil
				},
			})
			if err != nil {
				if m.asJSON {
					_ = writeJSON(m.Stdout, installer.Validation{Target: installer.ValidationTarget{Path: secrets.Mask(args[0])},
						Report: manifest.Report{Errors: []manifest.Finding{{Message: secrets.Mask(err.Error())}},
							Warnings: []manifest.Finding{}, Checked: []manifest.Checked{}}})
					return errFailed
				}
				return fail(m.Stderr, err)
			}
			if m.asJSON {
				if err := writeJSON(m.Stdout, v); err != nil {
					return err
				}
			} else {
				printValidation(m.Stdout, v)
			}
			if !v.OK {
				return errFailed
			}
			return nil
		},
	}
}

// printValidation writes the text form: every plugin- or marketplace-
// supplied string is escaped for the terminal.
func printValidation(w io.Writer, v *installer.Validation) {
	fmt.Fprintf(w, "Validating %s %s (%s)\n", cmp.Or(v.Target.Kind, "plugin"), safeText(v.Target.Path), v.Target.Mode)
	if v.Target.Commit != "" {
		fmt.Fprintf(w, "  at commit %s\n", safeText(v.Target.Commit))
	}
	section := func(mark, noun string, fs []manifest.Finding) {
		if len(fs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s %s:\n", mark, plural(len(fs), noun))
		for _, f := range fs {
			fmt.Fprintf(w, "  %s\n", findingLine(f))
		}
	}
	section("✗", "error", v.Errors)
	section("⚠", "warning", v.Warnings)
	counts := map[string]int{}
	var notes []string
	for _, c := range v.Checked {
		counts[c.Kind]++
		if c.Note != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s", c.Entry, safeText(fmt.Sprintf("%q", c.Name)), safeText(c.Note)))
		}
	}
	var parts []string
	for _, k := range []string{"marketplace", "manifest", "plugin"} {
		if counts[k] > 0 {
			parts = append(parts, plural(counts[k], map[string]string{"marketplace": "marketplace", "manifest": "manifest", "plugin": "plugin folder"}[k]))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "\nChecked %s.\n", strings.Join(parts, ", "))
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "Not followed (%d):\n", len(notes))
		for i, n := range notes {
			if i == 20 {
				fmt.Fprintf(w, "  … and %d more (see --json)\n", len(notes)-20)
				break
			}
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	refuses := 0
	for _, f := range v.Warnings {
		if f.Refused != "" {
			refuses++
		}
	}
	switch {
	case !v.OK:
		fmt.Fprintln(w, "\n✗ Validation failed")
	case refuses > 0:
		fmt.Fprintf(w, "\n✓ Validation passed; Reasonix refuses or skips %s (see the warnings marked Reasonix)\n", plural(refuses, "item"))
	case len(v.Warnings) > 0:
		fmt.Fprintln(w, "\n✓ Validation passed with warnings")
	default:
		fmt.Fprintln(w, "\n✓ Validation passed")
	}
}

// findingLine is "[entry] [file] path: message", one line.
func findingLine(f manifest.Finding) string {
	entry := f.Entry
	if strings.HasPrefix(f.Path, entry) {
		entry = "" // the path names it already
	}
	where := slices.DeleteFunc([]string{entry, f.File, f.Path}, func(s string) bool { return s == "" })
	prefix := ""
	if len(where) > 0 {
		prefix = strings.Join(where, " ") + ": "
	}
	line := safeText(prefix) + safeLine(f.Message, 0)
	if how := cmp.Or(f.Kept, f.Refused); how != "" {
		line += " [Reasonix: " + safeLine(how, 0) + "]"
	}
	return line
}
