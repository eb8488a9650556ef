package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/manifest"
)

// userConfig on the command line (SPEC §7, §11): --config KEY=VALUE, or
// NAME.KEY=VALUE for one plugin of a marketplace or an update of several,
// repeatable; and, when stdin and stderr are a terminal, a prompt for each
// required value a plan lacks (a sensitive one is not echoed).

const configFlagUsage = "set a userConfig option: KEY=VALUE, or NAME.KEY=VALUE for one plugin of a marketplace (repeatable; on a terminal, a required value left out is asked for, a sensitive one without echo)"

// parseConfigFlags turns --config values into the request's map. A
// malformed one is a usage error that quotes only its key: what follows
// the = may be a secret.
func parseConfigFlags(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, f := range flags {
		key, value, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return nil, usageError(errors.New("--config expects KEY=VALUE (or NAME.KEY=VALUE), with the option's key before the ="))
		}
		if _, dup := out[key]; dup {
			return nil, usageError(fmt.Errorf("--config %s is given twice", key))
		}
		out[key] = value
	}
	if err := installer.CheckConfigKeys(out); err != nil {
		return nil, usageError(err)
	}
	return out, nil
}

// stdinIsTerminal reports whether the user can be asked something.
func (m *Main) stdinIsTerminal() bool {
	f, ok := m.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// withAnswers runs an install or update (run) with ap. When the user is
// at a terminal, its plan is made first, and each required value it lacks
// is asked for and added to req before it runs for real; a dry run whose
// plan lacks nothing is not made twice.
func (m *Main) withAnswers(ctx context.Context, req *installer.Request, ap installer.Approval, run func(installer.Request, installer.Approval) *installer.Response) *installer.Response {
	if !m.stdinIsTerminal() || !m.isTerminal(m.Stderr) {
		return run(*req, ap)
	}
	probe := run(*req, installer.Approval{DryRun: true})
	asked, err := m.askValues(ctx, probe, req)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			fmt.Fprintf(m.Stderr, "reasonix: %s\n", safeText(err.Error()))
		}
		return probe
	case !asked && ap.DryRun:
		return probe
	}
	return run(*req, ap)
}

// askValues asks for each required value a plan lacks, of the plugins it
// blocks for one (install.config_required), and adds it to req: KEY for a
// plan of one plugin, NAME.KEY for one of several. It reports whether it
// asked for anything.
func (m *Main) askValues(ctx context.Context, plan *installer.Response, req *installer.Request) (asked bool, err error) {
	f := m.Stdin.(*os.File)
	for _, a := range plan.Actions {
		var missing []manifest.Option
		for _, o := range a.UserConfig {
			if o.Missing() {
				missing = append(missing, o.Option)
			}
		}
		if a.Code() != plugind.CodeConfigRequired || len(missing) == 0 {
			continue
		}
		fmt.Fprintf(m.Stderr, "\n%s needs values for its options:\n", safeText(a.Name))
		for _, o := range missing {
			key := o.Key
			if len(plan.Actions) > 1 {
				key = a.Name + "." + key
			}
			text, err := m.askOption(ctx, f, o)
			if err != nil {
				return true, err
			}
			if req.Config == nil {
				req.Config = map[string]string{}
			}
			req.Config[key] = text
			asked = true
		}
	}
	return asked, nil
}

// askOption asks for one option's value until it is one the option takes
// (three tries). A sensitive value is read without echo, and never
// repeated in an error.
func (m *Main) askOption(ctx context.Context, f *os.File, o manifest.Option) (string, error) {
	title := cmp.Or(o.Title, o.Key)
	if o.Description != "" {
		fmt.Fprintf(m.Stderr, "  %s: %s\n", safeText(title), safeLine(o.Description, maxCell))
	}
	hint := o.Type
	if o.Sensitive {
		hint += ", hidden as you type"
	}
	for try := 0; try < 3; try++ {
		prompt := func() { fmt.Fprintf(m.Stderr, "  %s (%s): ", safeText(o.Key), hint) }
		text, err := readAnswer(ctx, f, o.Sensitive, prompt)
		if o.Sensitive {
			fmt.Fprintln(m.Stderr) // the user's Enter was not echoed
		}
		if err != nil {
			return "", err
		}
		if _, err := o.Parse(text); err != nil {
			fmt.Fprintf(m.Stderr, "  %s\n", safeText(err.Error()))
			continue
		}
		return text, nil
	}
	return "", fmt.Errorf("no usable value for %s was given", o.Label())
}

// readAnswer prompts and reads one line from the terminal f, without echo
// when hidden. For a hidden value, echo goes off before the prompt is
// printed, so nothing typed after the prompt appears can be shown. An
// interrupt (the context ends) gives the terminal back as it was.
func readAnswer(ctx context.Context, f *os.File, hidden bool, prompt func()) (string, error) {
	fd := int(f.Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	read := func() (string, error) { return readLine(f) }
	if hidden {
		restore, err := hideEcho(fd)
		switch {
		case err == nil:
			defer restore()
		case errors.Is(err, errors.ErrUnsupported):
			read = func() (string, error) {
				b, err := term.ReadPassword(fd)
				return string(b), err
			}
		default:
			return "", err
		}
	}
	prompt()
	type answer struct {
		text string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		text, err := read()
		got <- answer{text, err}
	}()
	select {
	case a := <-got:
		if errors.Is(a.err, io.EOF) && a.text == "" {
			return "", errors.New("no value given (end of input)")
		}
		return a.text, a.err
	case <-ctx.Done():
		_ = term.Restore(fd, state)
		return "", ctx.Err()
	}
}

// readLine reads up to a newline a byte at a time, so nothing after it is
// taken from the terminal (a hidden read may follow).
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return strings.TrimSuffix(b.String(), "\r"), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			return b.String(), err
		}
	}
}

// options prints, for each plugin of a review that has userConfig options
// and that it installs or moves, or blocks for a value, what each is set
// to: a non-sensitive value, "set" for a sensitive one, its default, or
// that it is missing.
func (s *console) options(actions []installer.Action) {
	for _, a := range actions {
		if a.Status == installer.ActionReady || a.Code() == plugind.CodeConfigRequired || a.Code() == plugind.CodeConfigInvalid {
			titled(s, "options of "+safeText(a.Name)+":", a.UserConfig, func(o installer.ConfigOption) string {
				return safeCell(optionLabel(o.Option), 60) + "  " + optionState(o)
			})
		}
	}
}

func optionLabel(o manifest.Option) string {
	if o.Title != "" && o.Title != o.Key {
		return o.Key + " (" + o.Title + ")"
	}
	return o.Key
}

// optionState says what an option is set to, never a sensitive value.
func optionState(o installer.ConfigOption) string {
	var s string
	switch {
	case o.Set && o.Sensitive:
		s = "set (sensitive, not shown)"
	case o.Set && o.Value != nil:
		s = "= " + safeCell(o.Value.Text(), maxCell)
	case o.Default != nil:
		s = "default " + safeCell(o.Default.Text(), maxCell)
	case o.Required:
		s = "MISSING (required)"
	default:
		s = "not set"
	}
	if o.Kept {
		s += ", kept from the installed copy"
	}
	return s
}

// configArgs are the --config flags of an approve command: those that
// reproduce req's non-sensitive values, the ones a stored plan keeps.
// Sensitive ones, and any that reach no option the plan knows of, are
// never printed (sensitiveNote says to give them again).
func configArgs(req installer.Request, resp *installer.Response) []string {
	printable := installer.StoredConfig(req, resp.Actions)
	var flags []string
	for _, k := range slices.Sorted(maps.Keys(printable)) {
		flags = append(flags, "--config", k+"="+printable[k])
	}
	return flags
}

// sensitiveNote tells how to approve a plan whose request gave
// sensitive values: the same ones again, which are never printed.
func (s *console) sensitiveNote(actions []installer.Action) {
	var keys []string
	for _, a := range actions {
		for _, o := range a.UserConfig {
			if o.Sensitive && o.Set && !o.Kept {
				k := o.Key
				if len(actions) > 1 {
					k = a.Name + "." + k
				}
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	s.line("  and give the same sensitive values again (never printed): %s; on a terminal a required one left out is asked for", safeText(strings.Join(keys, ", ")))
}
