package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"reasonix.io/plugind/internal/fakegithub"
)

// What a person sees (issue 25): the real binary in a real terminal —
// tmux, at 60 and at 150 columns — and the screen as it is when the
// command has ended. The review and its approve line are at the bottom,
// FULL TRUST is in view right above it, the result line is last, and no
// line of ours is wider than the terminal (the JSON on stdout is the
// user's data: it wraps as the terminal pleases).

// tmuxTerm is a pane running one command in a tmux server of the test's
// own (a socket in a temporary folder).
type tmuxTerm struct {
	t      *testing.T
	socket string
	width  int
}

// doneMark ends a command's output in the pane, with its exit status.
const doneMark = "@@done "

func newTmux(t *testing.T, width int) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (Debian: apt-get install tmux; .ci/run installs it): the terminal screen tests need it")
	}
	tm := &tmuxTerm{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock"), width: width}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs the binary with args in a new pane, at the root of the
// repository (where the README's commands run), with env added to the
// test's environment (TERM as tmux sets it).
func (tm *tmuxTerm) start(env []string, args ...string) {
	tm.t.Helper()
	words := []string{"env"}
	for _, kv := range env {
		words = append(words, shellQuote(kv))
	}
	words = append(words, shellQuote(binPath))
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	// clear first: the screen holds this command's output alone.
	script := "clear; " + strings.Join(words, " ") + "; printf '" + doneMark + "%s' $?; sleep 600"
	root, err := filepath.Abs("../..")
	if err != nil {
		tm.t.Fatal(err)
	}
	tm.tmux("new-session", "-d", "-c", root, "-x", fmt.Sprint(tm.width), "-y", "50", "sh", "-c", script)
}

// screen is the pane's rows as shown (join: wrapped rows joined into the
// lines that were printed; colour: with escape sequences).
func (tm *tmuxTerm) screen(join, colour bool) []string {
	args := []string{"capture-pane", "-p", "-S", "-2000"}
	if join {
		args = append(args, "-J")
	}
	if colour {
		args = append(args, "-e")
	}
	return strings.Split(strings.TrimRight(tm.tmux(args...), "\n"), "\n")
}

// wait polls the screen until it shows want (a pattern) or d passes.
func (tm *tmuxTerm) wait(want *regexp.Regexp, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if want.MatchString(strings.Join(tm.screen(true, false), "\n")) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// finish waits for the command to end and returns its exit status and
// its output's lines, up to the done mark.
func (tm *tmuxTerm) finish(join bool) (int, []string) {
	tm.t.Helper()
	if !tm.wait(regexp.MustCompile(regexp.QuoteMeta(doneMark)+`\d+`), 60*time.Second) {
		tm.t.Fatalf("the command did not end within a minute; the screen:\n%s", strings.Join(tm.screen(false, false), "\n"))
	}
	lines := tm.screen(join, false)
	code := -1
	for i, l := range lines {
		if j := strings.Index(l, doneMark); j >= 0 {
			fmt.Sscanf(l[j+len(doneMark):], "%d", &code)
			lines[i] = l[:j]
			lines = lines[:i+1]
			break
		}
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return code, lines
}

// ours are the lines after the JSON response (its closing brace): the
// human part, which must fit the terminal.
func ours(lines []string) []string {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i] == "}" {
			return lines[i+1:]
		}
	}
	return lines
}

// flat is lines as one text with every run of blanks one space: what was
// printed, whichever rows the terminal's width broke it into.
func flat(lines []string) string { return strings.Join(strings.Fields(strings.Join(lines, " ")), " ") }

// lastResult is the result line at the end of lines, its wrapped rows
// joined.
func lastResult(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, markDone) || strings.HasPrefix(l, markFailed) || strings.HasPrefix(l, "could not check") {
			return flat(lines[i:])
		}
		if !strings.HasPrefix(lines[i], "  ") {
			break // not a wrapped row of a result line
		}
	}
	return ""
}

// checkWidth fails for any line of ours wider than the terminal.
func (tm *tmuxTerm) checkWidth(what string, lines []string) {
	tm.t.Helper()
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > tm.width {
			tm.t.Errorf("%s at %d columns: a line %d columns wide wraps:\n%s", what, tm.width, w, l)
		}
	}
}

// fullTrustMarket is a local marketplace with an ordinary plugin, one that
// runs a FULL TRUST runtime, and an entry that is skipped.
func fullTrustMarket(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"Acme"},"plugins":[
			{"name":"notes","source":"./notes","description":"Running notes"},
			{"name":"side","source":"./side","description":"A sidecar"},
			{"name":"from-npm","source":{"source":"npm","package":"@acme/x"}}]}`,
		"notes/.claude-plugin/plugin.json": `{"name":"notes","version":"1.0.0"}`,
		"notes/skills/notes/SKILL.md":      "---\ndescription: Keep running notes\n---\nbody\n",
		"side/reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2","name":"side","version":"1.0.0","contributes":{"skills":["skills"]},` +
			`"runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/sidecar","args":["--serve","--port","7000"],"capabilities":["tools"],` +
			`"tools":[{"name":"look","description":"Look things up in the team's wiki","readOnly":true,"inputSchema":{"type":"object"}}]}}`,
		"side/skills/s/SKILL.md": "---\ndescription: s\n---\n",
		"side/bin/sidecar":       "#!/bin/sh\nexit 0\n",
	})
	return dir
}

// TestScreenAfterADryRun: the review is what stays on screen, FULL TRUST is
// the last thing before the approve line, the result line is last.
func TestScreenAfterADryRun(t *testing.T) {
	t.Parallel()
	market := fullTrustMarket(t)
	for _, width := range []int{60, 150} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			tm := newTmux(t, width)
			tm.start([]string{"REASONIX_HOME=" + t.TempDir()}, "plugin", "install", market, "--dry-run")
			code, lines := tm.finish(true)
			mine := ours(lines)
			t.Logf("the screen at %d columns:\n%s", width, strings.Join(tm.screen(false, false), "\n"))
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			tm.checkWidth("the dry run's review", mine)
			text := flat(mine)
			trust := strings.LastIndex(text, "!! FULL TRUST runtime in side")
			approve := strings.Index(text, "To install exactly this plan:")
			if trust < 0 || approve < trust {
				t.Fatalf("FULL TRUST is not right above the approve line:\n%s", text)
			}
			between := text[trust:approve]
			for _, other := range []string{"skipped", "warnings:", "notes "} {
				if strings.Contains(between, other) {
					t.Errorf("%q comes between FULL TRUST and the approve line:\n%s", other, between)
				}
			}
			if last := lastResult(mine); !strings.HasPrefix(last, "✓ planned 2 plugins, 1 skipped: nothing written yet") || !strings.Contains(last, "FULL TRUST: side would run outside the sandbox") {
				t.Errorf("the last line is not the result line: %q", last)
			}
			// The whole review fits in one screen of 50 rows: nothing of it
			// scrolled away.
			rows := tm.screen(false, false)
			if !strings.Contains(strings.Join(rows, "\n"), "Review of ") {
				t.Errorf("the review's start scrolled off the screen")
			}
		})
	}
}

// TestScreenAfterABareYes: a bare --yes of a FULL TRUST runtime shows the
// block in full as the result, and the result line names it.
func TestScreenAfterABareYes(t *testing.T) {
	t.Parallel()
	market := fullTrustMarket(t)
	for _, width := range []int{60, 150} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			tm := newTmux(t, width)
			tm.start([]string{"REASONIX_HOME=" + t.TempDir()}, "plugin", "install", market, "--name", "side", "--yes")
			code, lines := tm.finish(true)
			mine := ours(lines)
			t.Logf("the screen at %d columns:\n%s", width, strings.Join(tm.screen(false, false), "\n"))
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			tm.checkWidth("an install's result", mine)
			text := flat(mine)
			for _, want := range []string{"Applied: ", "1 plugin installed:", "!! FULL TRUST runtime in side: ${REASONIX_PLUGIN_ROOT}/bin/sidecar --serve --port 7000", "tool ext__side__look"} {
				if !strings.Contains(text, want) {
					t.Errorf("the screen lacks %q", want)
				}
			}
			if last := lastResult(mine); !strings.HasPrefix(last, "✓ installed 1 plugin; FULL TRUST: side runs outside the sandbox") {
				t.Errorf("the last line is not the result line: %q", last)
			}
		})
	}
}

// TestScreenAfterAFailedInstall: the failure is the last line, marked, and
// says why; colour marks it unless NO_COLOR.
func TestScreenAfterAFailedInstall(t *testing.T) {
	t.Parallel()
	for _, width := range []int{60, 150} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			tm := newTmux(t, width)
			tm.start([]string{"REASONIX_HOME=" + t.TempDir()}, "plugin", "install", "examples/nonexistent", "--dry-run")
			code, lines := tm.finish(true)
			mine := ours(lines)
			t.Logf("the screen at %d columns:\n%s", width, strings.Join(tm.screen(false, false), "\n"))
			if code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			tm.checkWidth("a failed install", mine)
			last := lastResult(mine)
			if !strings.HasPrefix(last, "✗ nothing installed: source \"examples/nonexistent\"") || strings.Contains(last, "github") {
				t.Errorf("the last line: %q", last)
			}
			coloured := strings.Join(tm.screen(true, true), "\n")
			if !regexp.MustCompile(`\x1b\[[0-9;]*m✗ nothing installed:`).MatchString(coloured) {
				t.Errorf("the failure is not coloured:\n%q", coloured)
			}
		})
	}
	t.Run("NO_COLOR", func(t *testing.T) {
		t.Parallel()
		tm := newTmux(t, 60)
		tm.start([]string{"REASONIX_HOME=" + t.TempDir(), "NO_COLOR=1"}, "plugin", "install", "examples/nonexistent", "--dry-run")
		tm.finish(true)
		if got := strings.Join(tm.screen(true, true), "\n"); strings.Contains(got, "\x1b[") {
			t.Errorf("NO_COLOR, yet colour:\n%q", got)
		}
	})
}

// TestScreenWhileAHostStalls: a host that takes the connection and then
// says nothing is named on screen within seconds, not when the request
// gives up; the status line redraws in place (no leftovers at 60 columns)
// and is gone once the command ends.
func TestScreenWhileAHostStalls(t *testing.T) {
	t.Parallel()
	for _, width := range []int{60, 150} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			gh := fakegithub.New(t)
			gh.CreateRepo("acme", "slow").Commit("main", pluginTree("slow"))
			gh.Fault(fakegithub.RouteAPI, fakegithub.Fault{Stall: 6 * time.Second, Times: 1})
			tm := newTmux(t, width)
			start := time.Now()
			tm.start(append(gh.Env(), "REASONIX_HOME="+t.TempDir()), "plugin", "install", "https://github.com/acme/slow", "--dry-run")
			if !tm.wait(regexp.MustCompile(`127\.0\.0\.1:\d+ has sent nothing for \ds`), 5*time.Second) {
				t.Fatalf("after %v the stalled host is not named; the screen:\n%s", time.Since(start).Round(time.Second), strings.Join(tm.screen(false, false), "\n"))
			}
			t.Logf("the stall was on screen after %v", time.Since(start).Round(100*time.Millisecond))
			during := tm.screen(false, false)
			code, lines := tm.finish(true)
			t.Logf("the screen during the stall at %d columns:\n%s\n\nand after:\n%s", width, strings.Join(during, "\n"), strings.Join(tm.screen(false, false), "\n"))
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			tm.checkWidth("the screen during the stall", during)
			for _, l := range during {
				if strings.HasPrefix(l, spinner[0][:1]) && ansi.StringWidth(l) >= width {
					t.Errorf("the status line fills the terminal (%d columns): a redraw would leave it behind: %q", width, l)
				}
			}
			mine := ours(lines)
			tm.checkWidth("the stalled install", mine)
			for _, l := range lines {
				if strings.Contains(l, "waiting for") || strings.Contains(l, "connecting to") || strings.Contains(l, "receiving from") {
					t.Errorf("the status line left a row behind: %q", l)
				}
			}
			if last := lastResult(mine); !strings.HasPrefix(last, "✓ planned 1 plugin") {
				t.Errorf("the last line: %q", last)
			}
		})
	}
}

// TestScreenOfUpdateWithTheNetworkDown: never "up to date" when nothing
// could be checked.
func TestScreenOfUpdateWithTheNetworkDown(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", pluginTree("tools"))
	home := t.TempDir()
	if r := runBinary(t, home, gh.Env(), "plugin", "install", "https://github.com/acme/tools", "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s", r.code, r.stderr)
	}
	gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Status: 503})
	tm := newTmux(t, 60)
	tm.start(append(gh.Env(), "REASONIX_HOME="+home), "plugin", "update", "--all", "--dry-run")
	code, lines := tm.finish(true)
	t.Logf("the screen:\n%s", strings.Join(tm.screen(false, false), "\n"))
	text := flat(ours(lines))
	if code != 1 || strings.Contains(strings.ToLower(text), "everything is up to date") {
		t.Fatalf("exit %d with the network down:\n%s", code, text)
	}
	all := flat(lines)
	for _, want := range []string{"retrying 127.0.0.1:", "(2/4) in 100ms…", "could not check (1): tools", "could not check 1 plugin (network): showing what was cached"} {
		if !strings.Contains(all, want) {
			t.Errorf("the screen lacks %q", want)
		}
	}
	tm.checkWidth("update with the network down", ours(lines))
}
