package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sandbox is a Reasonix home plus every other place a command could write
// to by default: its working folder, HOME, TMPDIR and the XDG folders, all
// empty. Tests of refused and failed operations assert that nothing but the
// home changed.
type sandbox struct {
	home    string
	cwd     string
	outside []string
	env     []string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	sb := &sandbox{home: filepath.Join(root, "home")}
	for _, v := range []string{"cwd", "HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		dir := filepath.Join(root, "outside", v)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		sb.outside = append(sb.outside, dir)
		if v == "cwd" {
			sb.cwd = dir
			continue
		}
		sb.env = append(sb.env, v+"="+dir)
	}
	return sb
}

// run executes the binary in the sandbox: REASONIX_HOME is the home, the
// working folder and every default write location are the sandbox's.
func (sb *sandbox) run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = sb.cwd
	cmd.Env = append(os.Environ(), "REASONIX_HOME="+sb.home)
	cmd.Env = append(cmd.Env, sb.env...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// assertNothingOutside fails when anything appeared outside the home.
func (sb *sandbox) assertNothingOutside(t *testing.T) {
	t.Helper()
	for _, dir := range sb.outside {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) > 0 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("written outside REASONIX_HOME, in %s: %v", dir, names)
		}
	}
}

// registry returns the registry file's bytes ("" when there is none), for
// byte-for-byte comparisons around refused operations.
func (sb *sandbox) registry(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sb.home, "plugin-packages.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// warnings counts the warning lines on stderr.
func warningLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "warning:") || strings.Contains(l, "level=WARN") {
			out = append(out, l)
		}
	}
	return out
}

// readOnly makes path unwritable in a way that holds for root too: the
// immutable attribute (chattr +i) when running as root, else chmod. It
// reports false when neither is possible here (a file system without
// attributes), and undoes itself when the test ends.
func readOnly(t *testing.T, path string) bool {
	t.Helper()
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
			t.Logf("chattr +i %s: %v %s", path, err, out)
			return false
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
		return true
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o444)
	if info.IsDir() {
		mode = 0o555
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(path, info.Mode().Perm()) })
	return true
}
