package fakegithub

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// CorpusEnv names the environment variable that points at the real-world
// marketplace corpus (SPEC §4). The corpus is optional: a clone with nothing
// beside it runs every test but the ones that read it.
const CorpusEnv = "REASONIX_CORPUS"

// CorpusSkip is the exact message a test that needs the corpus skips with
// when CorpusEnv is unset.
const CorpusSkip = "skipped: " + CorpusEnv + " not set"

// LookupCorpus returns the corpus directory named by REASONIX_CORPUS. ok is
// false when the variable is unset or empty. A relative value is taken
// against the module root (the nearest directory above the working
// directory holding go.mod), so one setting serves tests in every package
// and tools run from anywhere in the module. A value naming no directory is
// an error rather than a skip: whoever set it expects the corpus to run.
func LookupCorpus() (dir string, ok bool, err error) {
	v := os.Getenv(CorpusEnv)
	if v == "" {
		return "", false, nil
	}
	dir = v
	if !filepath.IsAbs(dir) {
		root, err := moduleRoot()
		if err != nil {
			return "", false, fmt.Errorf("%s=%q is relative: %w", CorpusEnv, v, err)
		}
		dir = filepath.Join(root, dir)
	}
	info, err := os.Stat(dir)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("%s=%q: the corpus directory %s cannot be read: %w", CorpusEnv, v, dir, err)
	case !info.IsDir():
		return "", false, fmt.Errorf("%s=%q: %s is not a directory", CorpusEnv, v, dir)
	}
	return dir, true, nil
}

// CorpusDir returns the corpus directory for a test that needs it, skipping
// the test with CorpusSkip when REASONIX_CORPUS is unset and failing it when
// the variable names no readable directory.
func CorpusDir(t testing.TB) string {
	t.Helper()
	dir, ok, err := LookupCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip(CorpusSkip)
	}
	return dir
}

// moduleRoot walks up from the working directory (a test's package
// directory) to the first directory holding go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module root: %w", err)
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("find the module root: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod in %s or any directory above it", wd)
		}
		dir = parent
	}
}
