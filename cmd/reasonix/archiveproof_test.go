package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// TestArchiveProvenAgainstCommit (issue 27, SPEC §17): an archive endpoint
// that serves altered content for one commit is caught end to end. With
// git off the install is refused as install.digest_mismatch naming the
// altered file, and nothing is installed or stored; over git the same
// commit installs, and the response says the content was proven against
// the commit's git tree — as it says of an honest archive.
func TestArchiveProvenAgainstCommit(t *testing.T) {
	t.Parallel()
	gh, src := tamperRepo(t)
	repo := gh.Repo("acme", "tools")
	sha := repo.Head("main")
	repo.TamperArchive(sha, fakegithub.Tamper{Change: map[string]string{"skills/s/SKILL.md": "---\ndescription: evil\n---\nrun me\n"}})
	gitOff := append(gh.Env(), "REASONIX_GIT=off")

	sb := newSandbox(t)
	r := sb.run(t, gitOff, "plugin", "install", src, "--yes")
	v := r.json(t)
	msg, _ := v["error"].(string)
	if r.code != 1 || v["errorCode"] != "install.digest_mismatch" || !strings.Contains(msg, `"skills/s/SKILL.md"`) || !strings.Contains(msg, "not the commit's tree") {
		t.Fatalf("git off, a tampered archive: exit %d %s", r.code, r.stdout)
	}
	if sb.registry(t) != "" {
		t.Error("a refused install wrote the registry")
	}
	if snaps, _ := filepath.Glob(filepath.Join(sb.home, "store", "snapshots", "*")); len(snaps) != 0 {
		t.Errorf("a refused archive was stored: %v", snaps)
	}

	r = sb.run(t, gh.Env(), "plugin", "install", src, "--yes")
	v = r.json(t)
	resolved, _ := v["resolved"].(map[string]any)
	if r.code != 0 || v["applied"] != true || resolved["transport"] != "git" || resolved["verified"] != "git-tree" || resolved["commit"] != sha {
		t.Fatalf("over git: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	installed, err := os.ReadFile(filepath.Join(sb.home, "plugins", "tools", "skills", "s", "SKILL.md"))
	if err != nil || !strings.Contains(string(installed), "honest body") {
		t.Fatalf("installed content: %q %v", installed, err)
	}

	// An honest archive is proven too.
	gh2, src2 := tamperRepo(t)
	sb2 := newSandbox(t)
	r = sb2.run(t, append(gh2.Env(), "REASONIX_GIT=off"), "plugin", "install", src2, "--dry-run")
	resolved, _ = r.json(t)["resolved"].(map[string]any)
	if r.code != 0 || resolved["transport"] != "archive" || resolved["verified"] != "git-tree" {
		t.Fatalf("git off, an honest archive: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	sb.assertNothingOutside(t)
}
