package parity

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Recording is one run of Claude Code over a marketplace, as the harness
// (bench/claude-side-by-side.sh --goldens) leaves it: per tried entry NAME,
// in Logs, NAME.rc and NAME.log (`claude plugin install NAME@MARKET`'s exit
// status and output) and, when it installed, NAME.details.rc and
// NAME.details (`claude plugin details NAME@MARKET`); and List, the final
// `claude plugin list --json`.
type Recording struct {
	Marketplace string
	Claude      string // `claude --version`
	Source      string
	Harness     string
	// AddCommand is the `claude plugin marketplace add …` the run began with.
	AddCommand   string
	Logs         string
	List         map[string]ListEntry
	Placeholders Placeholders
	// Sessions is what one session after the installs loaded, by plugin
	// (ParseSession); nil when the run recorded no session.
	Sessions map[string]*Session
}

// ErrHarness is the error of an entry Claude could not install because the
// harness could not serve it: it gets no golden.
var ErrHarness = errors.New("not recorded: the harness could not serve it")

// Tried reports whether the run tried to install plugin.
func (r *Recording) Tried(plugin string) bool {
	_, err := os.Stat(filepath.Join(r.Logs, plugin+".rc"))
	return err == nil
}

// Golden assembles plugin's golden from the run.
func (r *Recording) Golden(plugin string) (*Golden, error) {
	id := plugin + "@" + r.Marketplace
	exit, out, err := r.readRun(plugin)
	if err != nil {
		return nil, err
	}
	inst := ParseInstall(plugin, exit, out)
	if inst.Exit != 0 && HarnessFailure(inst.Error) {
		return nil, fmt.Errorf("%w: %s: %s", ErrHarness, plugin, r.Placeholders.Apply(inst.Error))
	}
	g := &Golden{
		Plugin: plugin, Marketplace: r.Marketplace, Claude: r.Claude, Source: r.Source, Harness: r.Harness,
		Commands: []string{r.AddCommand, "claude plugin install " + id},
		Install: Install{
			Exit: inst.Exit, Error: r.Placeholders.Apply(inst.Error), DisabledByDefault: inst.DisabledByDefault,
		},
		LoadedMCPServers: []string{},
	}
	if e, ok := r.List[id]; ok {
		// Not e.Version: for a plugin whose manifest has none, Claude makes
		// one from the marketplace's git commit, which changes every commit.
		g.Listed, g.Enabled = true, e.Enabled
		for _, msg := range e.Errors {
			g.LoadErrors = append(g.LoadErrors, r.Placeholders.Apply(OneLine(msg)))
		}
		for _, msg := range e.Notes {
			g.Notes = append(g.Notes, r.Placeholders.Apply(OneLine(msg)))
		}
		g.LoadedMCPServers = e.MCPServerNames()
	}
	dexit, dout, err := r.readRun(plugin + ".details")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		g.Commands = append(g.Commands, "claude plugin details "+id)
		if dexit == 0 {
			d, err := ParseDetails(plugin, dout)
			if err != nil {
				return nil, err
			}
			g.DisplayName, g.Version, g.Details = d.DisplayName, d.Version, &d.Details
			if d.Name != plugin {
				g.ClaudeName = d.Name
			}
		}
	}
	g.Commands = append(g.Commands, "claude plugin list --json")
	// A session loads only enabled plugins, under the name they load as.
	if r.Sessions != nil && g.Install.Exit == 0 && g.Enabled {
		loaded := plugin
		if g.ClaudeName != "" {
			loaded = g.ClaudeName
		}
		g.Session = r.Sessions[loaded]
		if g.Session == nil {
			g.Session = &Session{Agents: []string{}, Commands: []string{}}
		}
		g.Commands = append(g.Commands, SessionCommand)
	}
	return g, nil
}

// readRun reads NAME.rc and NAME.log (NAME.details.rc, NAME.details).
func (r *Recording) readRun(base string) (int, string, error) {
	rc, err := os.ReadFile(filepath.Join(r.Logs, base+".rc"))
	if err != nil {
		return 0, "", fmt.Errorf("recording of %s: %w", base, err)
	}
	exit, err := strconv.Atoi(strings.TrimSpace(string(rc)))
	if err != nil {
		return 0, "", fmt.Errorf("recording of %s: exit status %q: %w", base, rc, err)
	}
	logName := base + ".log"
	if strings.HasSuffix(base, ".details") {
		logName = base
	}
	out, err := os.ReadFile(filepath.Join(r.Logs, logName))
	if err != nil {
		return 0, "", fmt.Errorf("recording of %s: %w", base, err)
	}
	return exit, string(out), nil
}
