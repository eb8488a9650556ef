package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestValidateOnHostileFolders (issue 21, item 6): validate reads through
// install's confined, regular-files-only, size-capped reader. A SKILL.md
// that is a link to /dev/zero used to grow past 1.5 GB, a named pipe hung
// it, and a plugin.json linked to a file outside the folder was read and
// quoted. Each is now a finding, quickly, and nothing outside is quoted.
func TestValidateOnHostileFolders(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	const secret = "outside-secret-do-not-quote"
	outside := filepath.Join(base, "outside.json")
	writeFile(t, outside, `{"name":"`+secret+`","version":"1.0.0","description":"`+secret+`"}`)
	plugin := func(dir string) string {
		writeFile(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), `{"name":"p","version":"1.0.0","description":"d","author":{"name":"a"}}`)
		return dir
	}
	symlink := func(target, link string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	fifo := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	zero := plugin(filepath.Join(base, "zero"))
	symlink("/dev/zero", filepath.Join(zero, "skills", "z", "SKILL.md"))
	pipe := plugin(filepath.Join(base, "pipe"))
	fifo(filepath.Join(pipe, "skills", "f", "SKILL.md"))
	fifo(filepath.Join(pipe, "commands", "c.md"))
	fifo(filepath.Join(pipe, "hooks", "hooks.json"))
	linked := filepath.Join(base, "linked")
	symlink(outside, filepath.Join(linked, ".claude-plugin", "plugin.json"))
	market := filepath.Join(base, "market")
	writeFile(t, filepath.Join(market, ".claude-plugin", "marketplace.json"),
		`{"name":"m","owner":{"name":"o"},"plugins":[{"name":"q","source":"./q","version":"9.9.9"}]}`)
	symlink(outside, filepath.Join(market, "q", ".claude-plugin", "plugin.json"))
	pipedMarket := filepath.Join(base, "piped-market")
	fifo(filepath.Join(pipedMarket, ".claude-plugin", "marketplace.json"))
	linkedMarket := filepath.Join(base, "linked-market")
	symlink(outside, filepath.Join(linkedMarket, ".claude-plugin", "marketplace.json"))

	for _, c := range []struct {
		name string
		arg  string
		says []string // findings, in the JSON
	}{
		{"SKILL.md links to /dev/zero", zero, []string{"skills/z/SKILL.md", "not read", "points outside"}},
		{"named pipes where files go", pipe, []string{"skills/f/SKILL.md", "named pipe (FIFO)", "not read"}},
		{"plugin.json links outside (folder)", linked, []string{".claude-plugin/plugin.json", "leaves the folder", "not read"}},
		{"plugin.json links outside (file)", filepath.Join(linked, ".claude-plugin", "plugin.json"), []string{"leaves the folder", "not read"}},
		{"an entry's plugin.json links outside (marketplace folder)", market, []string{"q/.claude-plugin/plugin.json", "leaves the folder"}},
		{"an entry's plugin.json links outside (marketplace.json)", filepath.Join(market, ".claude-plugin", "marketplace.json"), []string{"plugin.json", "leaves the folder"}},
		{"marketplace.json is a named pipe", pipedMarket, []string{"named pipe (FIFO)"}},
		{"marketplace.json links outside", linkedMarket, []string{"leaves the folder", "not read"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runMeasured(t, 30*time.Second, t.TempDir(), nil, "plugin", "validate", c.arg, "--json")
			t.Logf("exit %d in %s, peak RSS %d MiB", r.code, r.took.Round(time.Millisecond), r.usage.PeakRSS>>20)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1 (findings): %s %s", r.code, r.stdout, r.stderr)
			}
			if r.took > 10*time.Second || r.usage.PeakRSS > 150<<20 {
				t.Errorf("took %s and %d MiB", r.took, r.usage.PeakRSS>>20)
			}
			v := validateJSON(t, r.result)
			var all []string
			for _, f := range v.Errors {
				all = append(all, f.File+" "+f.Path+": "+f.Message)
			}
			joined := strings.Join(all, "\n")
			for _, want := range c.says {
				if !strings.Contains(joined, want) {
					t.Errorf("the findings lack %q:\n%s", want, joined)
				}
			}
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("validate quoted the file outside the folder:\n%s", r.stdout)
			}
		})
	}

	// The named pipe given as the argument itself is refused, not opened.
	direct := runMeasured(t, 30*time.Second, t.TempDir(), nil, "plugin", "validate", filepath.Join(pipedMarket, ".claude-plugin", "marketplace.json"))
	if direct.code != 1 || !strings.Contains(direct.stderr, "named pipe (FIFO), not a file or folder: not read") {
		t.Errorf("validate of a named pipe: exit %d %s %s", direct.code, direct.stdout, direct.stderr)
	}
	// Install reads a marketplace document the same way: a pipe is not
	// one (nor a manifest), at once.
	inst := runMeasured(t, 30*time.Second, t.TempDir(), nil, "plugin", "install", pipedMarket, "--dry-run")
	if inst.code != 1 || inst.took > 10*time.Second {
		t.Errorf("install of a marketplace whose document is a pipe: exit %d %s %s", inst.code, inst.stdout, inst.stderr)
	}
	inst = runMeasured(t, 30*time.Second, t.TempDir(), nil, "plugin", "install", linkedMarket, "--dry-run")
	if inst.code != 1 || strings.Contains(inst.stdout+inst.stderr, secret) {
		t.Errorf("install of a marketplace whose document links outside: exit %d %s %s", inst.code, inst.stdout, inst.stderr)
	}
}
