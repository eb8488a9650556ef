package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/sshd"
)

// TestTeamsTwoMachinesOverSSH is issue 26's two-machine scenario through
// the binary: machine A installs from two marketplaces, one public on
// GitHub and one private on a real sshd (its entries a relative plugin, an
// SSH url entry pinned by sha and an SSH git-subdir entry), and writes
// the lock; an empty machine B syncs to it and ends with the same plugins
// at the same commits and digests; the private marketplace moves on and
// a fresh machine's sync --frozen still installs the locked commits; the
// project's lock --update shows the move's capability diff; a lock whose
// digest was tampered with is refused, nothing written.
func TestTeamsTwoMachinesOverSSH(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("beta", "tools").Commit("main", merge(map[string]string{
		".claude-plugin/marketplace.json": `{"name":"beta","owner":{"name":"b"},"plugins":[{"name":"docs","source":"./docs"}]}`,
	}, claudePlugin("docs/", "docs", "writes docs")))

	srv := sshd.Start(t)
	extSHA := srv.Repo(t, "ext", claudePlugin("", "ext", "external one"))
	srv.Repo(t, "mono", claudePlugin("plugins/gs/", "gs", "from a subdir"))
	marketFiles := func(fmtFiles map[string]string) map[string]string {
		return merge(map[string]string{
			".claude-plugin/marketplace.json": `{"name":"corp","owner":{"name":"c"},"plugins":[
				{"name":"fmt","source":"./plugins/fmt"},
				{"name":"ext","source":{"source":"url","url":"git@git.corp.test:` + srv.Path("ext") + `","sha":"` + extSHA + `"}},
				{"name":"gs","source":{"source":"git-subdir","url":"ssh://git@git.corp.test` + srv.Path("mono") + `","path":"plugins/gs"}}]}`,
		}, fmtFiles)
	}
	srv.Repo(t, "market", marketFiles(claudePlugin("plugins/fmt/", "fmt", "formats code")))
	market := "git@git.corp.test:" + srv.Path("market")

	env := append(gh.Env(),
		"HOME="+srv.Home(t, srv.KnownHostsLine()),
		"REASONIX_URL_REWRITE=ssh://git@git.corp.test/=ssh://"+srv.User+"@"+srv.Addr()+"/")
	run := func(dir, home string, args ...string) result {
		t.Helper()
		return runBinaryWith(t, home, env, args, func(cmd *exec.Cmd) error {
			cmd.Dir = dir
			return cmd.Run()
		})
	}
	must := func(r result, what string) result {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", what, r.code, r.stdout, r.stderr)
		}
		return r
	}
	work := t.TempDir()

	a := t.TempDir()
	for _, src := range []string{market, "https://github.com/beta/tools"} {
		must(run(work, a, "plugin", "install", src, "--yes"), "install "+src+" on A")
	}
	lockPath := filepath.Join(work, "team.lock.json")
	must(run(work, a, "lock", "-o", lockPath), "lock on A")
	want := lockedEntries(t, a)
	if len(want) != 4 || !slices.ContainsFunc(want, func(e lockedEntry) bool {
		return e.Name == "ext" && strings.HasPrefix(e.Source, "ssh://git@git.corp.test/")
	}) {
		t.Fatalf("A installed %+v", want)
	}

	b := t.TempDir()
	must(run(work, b, "sync", lockPath, "--yes"), "sync on B")
	if got := lockedEntries(t, b); !equalEntries(got, want) {
		t.Fatalf("B after sync:\n%+v\nwant A's:\n%+v", got, want)
	}

	// The private marketplace moves on: fmt gains a command.
	srv.Commit(t, "market", marketFiles(merge(claudePlugin("plugins/fmt/", "fmt", "formats code"),
		map[string]string{"plugins/fmt/commands/tidy.md": "---\ndescription: tidies\n---\ntidy\n"})))
	c := t.TempDir()
	must(run(work, c, "sync", lockPath, "--yes", "--frozen"), "sync --frozen on C after the move")
	if got := lockedEntries(t, c); !equalEntries(got, want) {
		t.Fatalf("C after the marketplace moved:\n%+v\nwant the locked:\n%+v", got, want)
	}

	// A project that wants them: its lock, before and after a move.
	proj := filepath.Join(work, "proj")
	for _, d := range []string{filepath.Join(proj, ".git"), filepath.Join(proj, ".reasonix")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, ".reasonix", "plugins.json"), []byte(`{
  "marketplaces": {"corp": {"source": "`+market+`"}, "beta": {"source": "https://github.com/beta/tools"}},
  "plugins": {"fmt@corp": true, "ext@corp": true, "docs@beta": false}
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	must(run(proj, a, "lock", "--update"), "lock --update")
	srv.Commit(t, "market", marketFiles(merge(claudePlugin("plugins/fmt/", "fmt", "formats code"),
		map[string]string{"plugins/fmt/hooks/hooks.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"${CLAUDE_PLUGIN_ROOT}/guard.sh"}]}]}}`})))
	r := must(run(proj, a, "lock", "--update"), "lock --update after the move")
	fmtMove := actionNamed(t, r.json(t), "fmt")
	summary := strings.Join(toStrings(fmtMove["diff"].(map[string]any)["summary"]), "\n")
	if fmtMove["action"] != "replace" || !strings.Contains(summary, "PreToolUse") || fmtMove["risk"] == "low" {
		t.Fatalf("lock --update's fmt: %v", fmtMove)
	}
	if !strings.Contains(r.stderr, "wrote "+filepath.Join(proj, "reasonix.lock.json")+": 1 plugin added, moved or dropped, 2 up to date") {
		t.Errorf("lock --update's result line:\n%s", r.stderr)
	}

	// A tampered digest is refused, and nothing is written.
	lock := readLock(t, lockPath)
	for i := range lock.Plugins {
		if lock.Plugins[i].Name == "ext" {
			lock.Plugins[i].ContentDigest = "sha256:" + strings.Repeat("0", 64)
		}
	}
	tampered := writeLock(t, lock)
	d := t.TempDir()
	r = run(work, d, "sync", tampered, "--yes")
	if r.code != 1 || !strings.Contains(r.stdout, "install.digest_mismatch") {
		t.Fatalf("a tampered lock: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(d, "plugin-packages.json")); err == nil {
		if got := lockedEntries(t, d); slices.ContainsFunc(got, func(e lockedEntry) bool { return e.Name == "ext" }) {
			t.Fatalf("the tampered plugin was installed: %+v", got)
		}
	}
}
