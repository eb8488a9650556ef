package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/fakelog"
)

// logMarketRepos is a marketplace with a relative entry and one in another
// repository at a pinned commit.
func logMarketRepos(t *testing.T) (gh *fakegithub.Server, market, toolsSHA string) {
	t.Helper()
	gh = fakegithub.New(t)
	toolsSHA = gh.CreateRepo("acme", "tools").Commit("main", map[string]string{
		"plugins/fmt/.claude-plugin/plugin.json": `{"name":"fmt","version":"1.0.0"}`,
		"plugins/fmt/skills/s/SKILL.md":          "---\ndescription: fmt\n---\n",
	})
	gh.CreateRepo("acme", "market").Commit("main", map[string]string{
		"plugins/rel/.claude-plugin/plugin.json": `{"name":"rel","version":"1.0.0"}`,
		"plugins/rel/skills/s/SKILL.md":          "---\ndescription: rel\n---\n",
		".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[` +
			`{"name":"rel","source":"./plugins/rel"},` +
			`{"name":"fmt","source":{"source":"github","repo":"acme/tools","sha":"` + toolsSHA + `","path":"plugins/fmt"}}]}`,
	})
	return gh, "https://github.com/acme/market", toolsSHA
}

// TestChecksumLogFromTheBinary: with REASONIX_CHECKSUM_LOG set, an install
// asks the log once per record and a re-plan not at all; a record that
// differs from the content refuses the install with a SECURITY ERROR and
// writes nothing; a bad value is refused at start; without the variable
// nothing of the log is asked or written.
func TestChecksumLogFromTheBinary(t *testing.T) {
	t.Parallel()
	gh, market, toolsSHA := logMarketRepos(t)
	log := fakelog.New(t, "log.test", fakelog.FromFakeGitHub(gh))
	env := append(gh.Env(), "REASONIX_CHECKSUM_LOG="+log.Env())

	sb := newSandbox(t)
	if r := sb.run(t, env, "plugin", "install", market, "--yes"); r.code != 0 {
		t.Fatalf("install: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if n := log.Lookups(); n != 2 {
		t.Errorf("install: %d lookups, want 2 (one per entry)", n)
	}
	for _, p := range []string{"checksumlog/log.test/latest", "cache/checksumlog/log.test/lookup"} {
		if _, err := os.Stat(filepath.Join(sb.home, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, args := range [][]string{{"plugin", "install", market, "--dry-run"}, {"plugin", "update", "--all", "--dry-run"}} {
		log.Reset()
		if r := sb.run(t, env, args...); r.code != 0 {
			t.Fatalf("%s: exit %d %s %s", args, r.code, r.stdout, r.stderr)
		}
		if n := log.Requests(); n != 0 {
			t.Errorf("%s: the re-plan sent %d requests to the log, want 0", args, n)
		}
	}
	sb.assertNothingOutside(t)

	// The log records another digest for the pinned entry.
	forged := "sha256:" + strings.Repeat("e", 64)
	bad := fakelog.New(t, "log.test", fakelog.FromFakeGitHub(gh))
	bad.Alter("github.com/acme/tools", "plugins/fmt", toolsSHA, forged)
	sb2 := newSandbox(t)
	r := sb2.run(t, append(gh.Env(), "REASONIX_CHECKSUM_LOG="+bad.Env()), "plugin", "install", market, "--yes")
	v := r.json(t)
	msg, _ := v["error"].(string)
	if r.code != 1 || v["errorCode"] != "install.digest_mismatch" {
		t.Fatalf("mismatch: exit %d %s", r.code, r.stdout)
	}
	for _, want := range []string{"SECURITY ERROR", forged, "fetched:      sha256:", "record #", "may be compromised"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	// On a terminal, the SECURITY ERROR is a block, as Go prints it.
	term := runOnTerminal(t, t.TempDir(), append(gh.Env(), "REASONIX_CHECKSUM_LOG="+bad.Env()), "plugin", "install", market, "--yes")
	if !strings.Contains(term.stderr, "\nSECURITY ERROR\nThis content does NOT match") || !strings.Contains(term.stderr, "\n    checksum log: "+forged) {
		t.Errorf("the terminal does not show the SECURITY ERROR block:\n%s", term.stderr)
	}
	if reg := sb2.registry(t); reg != "" {
		t.Errorf("the refused install wrote the registry: %s", reg)
	}
	if ents, _ := os.ReadDir(filepath.Join(sb2.home, "plugins")); len(ents) != 0 {
		t.Errorf("the refused install wrote plugins: %v", ents)
	}

	// A bad value is refused before anything is asked.
	sb3 := newSandbox(t)
	r = sb3.run(t, append(gh.Env(), "REASONIX_CHECKSUM_LOG=not-a-key https://log.example"), "plugin", "install", market, "--dry-run")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "REASONIX_CHECKSUM_LOG") {
		t.Errorf("a bad REASONIX_CHECKSUM_LOG: exit %d %s %s", r.code, r.stdout, r.stderr)
	}

	// Without the variable, nothing of the log is asked or written.
	log.Reset()
	if r := sb3.run(t, gh.Env(), "plugin", "install", market, "--yes"); r.code != 0 {
		t.Fatalf("install without a log: exit %d %s", r.code, r.stderr)
	}
	for _, p := range []string{"checksumlog", "cache/checksumlog"} {
		if _, err := os.Stat(filepath.Join(sb3.home, p)); err == nil {
			t.Errorf("without a log, %s was made", p)
		}
	}
	if n := log.Requests(); n != 0 {
		t.Errorf("without a log, %d requests reached it", n)
	}
}
