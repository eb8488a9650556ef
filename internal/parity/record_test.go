package parity

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRecordingGolden(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plain.rc", "0\n")
	write("plain.log", "Successfully installed plugin: plain@m\n")
	write("plain.details.rc", "0\n")
	write("plain.details", detailsPlain)
	write("bad.rc", "1\n")
	write("bad.log", "\u2718 Failed to install plugin \"bad@m\": Plugin temp_local_17_ab12 at /run/home/.claude/x is invalid\n")
	list, err := ParseList([]byte(`[{"id":"plain@m","version":"a4e6b941f170","enabled":true,"errors":["Path not found: /mkt/p/x.md\n (commands)"],
		"notes":["Default agents/ folder is ignored"],"mcpServers":{"z":{},"srv":{}}}, {"id":"other@m2","enabled":false}]`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &Recording{Marketplace: "m", Claude: "2.1.197 (Claude Code)", Source: "o/r@c", Harness: "h", AddCommand: "claude plugin marketplace add o/r",
		Logs: logs, List: list, Placeholders: Placeholders{{"/run/home", "<home>"}, {"/mkt", "<marketplace>"}}}
	if !rec.Tried("plain") || rec.Tried("never") {
		t.Fatal("Tried")
	}
	g, err := rec.Golden("plain")
	if err != nil {
		t.Fatal(err)
	}
	want := &Golden{Plugin: "plain", Marketplace: "m", Claude: "2.1.197 (Claude Code)", Source: "o/r@c", Harness: "h",
		Commands: []string{"claude plugin marketplace add o/r", "claude plugin install plain@m", "claude plugin details plain@m", "claude plugin list --json"},
		Listed:   true, Enabled: true, Version: "1.2.3",
		LoadErrors: []string{"Path not found: <marketplace>/p/x.md (commands)"}, Notes: []string{"Default agents/ folder is ignored"},
		Details: &Details{Skills: []string{"plain-cmd", "plain-skill"}, Agents: []string{"plain-agent"}, Hooks: []string{"PreToolUse", "Stop"},
			MCPServers: []string{"srv"}, LSPServers: []string{}},
		LoadedMCPServers: []string{"srv", "z"}}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("got  %+v\nwant %+v", g, want)
	}
	bad, err := rec.Golden("bad")
	if err != nil {
		t.Fatal(err)
	}
	if bad.Install.Exit != 1 || bad.Install.Error != "Plugin temp_<id> at <home>/.claude/x is invalid" || bad.Listed || bad.Details != nil {
		t.Fatalf("bad: %+v", bad)
	}
	if ok, why := bad.ClaudeInstalls(); ok || !strings.Contains(why, "install failed") {
		t.Fatalf("bad installs: %v %s", ok, why)
	}
	// With a session recorded, an installed, enabled plugin gets what the
	// session loaded of it (nothing, when it loaded nothing); a refused one
	// gets none.
	rec.Sessions = map[string]*Session{"plain": {Agents: []string{"sub:a"}, Commands: []string{"c"}}}
	withSession, err := rec.Golden("plain")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(withSession.Session, rec.Sessions["plain"]) || withSession.Commands[len(withSession.Commands)-1] != SessionCommand {
		t.Errorf("session: %+v, commands %q", withSession.Session, withSession.Commands)
	}
	rec.Sessions = map[string]*Session{}
	if empty, _ := rec.Golden("plain"); empty.Session == nil || len(empty.Session.Agents)+len(empty.Session.Commands) != 0 {
		t.Errorf("a plugin the session loaded nothing of: %+v", empty.Session)
	}
	if bad, _ := rec.Golden("bad"); bad.Session != nil {
		t.Errorf("a refused plugin has a session: %+v", bad.Session)
	}
	rec.Sessions = nil

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vanished.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "untried.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteGoldens(dir, []*Golden{g, bad}, []string{"plain", "bad", "untried"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "vanished.json")); !os.IsNotExist(err) {
		t.Error("the golden of an entry gone from the marketplace stayed")
	}
	if _, err := os.Stat(filepath.Join(dir, "untried.json")); err != nil {
		t.Error("the golden of an entry not tried this time went away")
	}
	os.Remove(filepath.Join(dir, "untried.json"))
	read, err := ReadGoldens(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read["plain"], g) {
		t.Errorf("read back %+v", read["plain"])
	}
	if err := os.Rename(filepath.Join(dir, "bad.json"), filepath.Join(dir, "misnamed.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadGoldens(dir); err == nil || !strings.Contains(err.Error(), "should be named bad.json") {
		t.Fatalf("misnamed golden: %v", err)
	}
}

func TestReadOurs(t *testing.T) {
	t.Parallel()
	resp := `{"actions":[{"name":"a","status":"installed","skills":[{"name":"s","path":"skills/s"}],"hooks":[{"event":"Stop","source":"hooks/hooks.json"}]},
		{"name":"b","status":"blocked","error":"nothing maps"}]}`
	list := `{"plugins":[{"name":"a","enabled":false,"displayName":"A!"}]}`
	set, err := ReadOurs([]byte(resp), []byte(list))
	if err != nil {
		t.Fatal(err)
	}
	a := set.Get("a")
	if !a.Installed() || !a.Listed || a.Enabled || a.DisplayName != "A!" || a.Skills[0] != (Item{"s", "skills/s"}) || a.Hooks[0] != (Item{"Stop", "hooks/hooks.json"}) {
		t.Errorf("a: %+v", a)
	}
	if b := set.Get("b"); b.Installed() || b.Reason != "nothing maps" {
		t.Errorf("b: %+v", b)
	}
	if set.Get("c") != nil {
		t.Error("an entry without an action has an outcome")
	}
	refused, err := ReadOurs([]byte(`{"actions":[],"error":"unsafe archive"}`), []byte(`{"plugins":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := refused.Get("c"); c == nil || c.Installed() || !strings.Contains(c.Reason, "unsafe archive") {
		t.Errorf("refused marketplace: %+v", c)
	}
	if _, err := ReadOurs([]byte("not json"), []byte("{}")); err == nil {
		t.Error("a response that is not JSON was read")
	}
}

// TestReadOursDryRun: a plan, without a list, says what an install would.
func TestReadOursDryRun(t *testing.T) {
	t.Parallel()
	resp := `{"actions":[{"name":"a","status":"ready","source":"https://github.com/o/r/tree/abc/p","displayName":"A!","disabledByDefault":true},
		{"name":"b","status":"blocked","error":"nothing maps"}]}`
	set, err := ReadOurs([]byte(resp), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := set.Get("a"); !a.Installed() || !a.Listed || a.Enabled || a.DisplayName != "A!" || a.Source != "https://github.com/o/r/tree/abc/p" {
		t.Errorf("a: %+v", a)
	}
	if b := set.Get("b"); b.Installed() || b.Listed {
		t.Errorf("b: %+v", b)
	}
}

// TestMergeResponses: entries installed one by one read as one install of
// the marketplace; a request refused as a whole is that entry's refusal.
func TestMergeResponses(t *testing.T) {
	t.Parallel()
	merged, err := MergeResponses([]string{"a", "b"}, [][]byte{
		[]byte(`{"ok":true,"actions":[{"name":"a","status":"installed","compatibility":"full","warnings":["w"]}]}`),
		[]byte(`{"ok":false,"actions":[],"error":"no such entry","errorCode":"install.not_found"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	set, err := ReadOurs(merged, []byte(`{"plugins":[{"name":"a","enabled":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := set.Get("a"); a == nil || !a.Installed() || !a.Listed || a.Compatibility != "full" || len(a.Warnings) != 1 {
		t.Errorf("a: %+v", a)
	}
	if b := set.Get("b"); b == nil || b.Installed() || b.Reason != "no such entry" {
		t.Errorf("b: %+v", b)
	}
	if _, err := MergeResponses([]string{"a"}, nil); err == nil {
		t.Error("one name for no response merged")
	}
	if _, err := MergeResponses([]string{"a"}, [][]byte{[]byte("not json")}); err == nil {
		t.Error("a response that is not JSON merged")
	}
}

func TestWriteGoldensLeavesNoEmptyFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "m")
	if err := WriteGoldens(dir, nil, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("an empty goldens folder stayed: %v", err)
	}
}

func TestHarnessFailureGetsNoGolden(t *testing.T) {
	t.Parallel()
	logs := t.TempDir()
	for name, content := range map[string]string{
		"pinned.rc": "1", "pinned.log": "Failed to install plugin \"pinned@m\": Failed to checkout commit 09a0: fatal: remote error: upload-pack: not our ref 09a0",
		"big.rc": "1", "big.log": "Failed to install plugin \"big@m\": remote: fatal: unable to read ea3192e8ec5112eb8b4f2a7bde5d13bbb95e6ac0",
		"real.rc": "1", "real.log": "Failed to install plugin \"real@m\": Validation errors: agents: Invalid input",
	} {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := &Recording{Marketplace: "m", Logs: logs}
	for _, p := range []string{"pinned", "big"} {
		if _, err := rec.Golden(p); !errors.Is(err, ErrHarness) {
			t.Errorf("%s: %v, want ErrHarness", p, err)
		}
	}
	if g, err := rec.Golden("real"); err != nil || g.Install.Exit != 1 {
		t.Errorf("a refusal of Claude's own: %+v %v", g, err)
	}
}
