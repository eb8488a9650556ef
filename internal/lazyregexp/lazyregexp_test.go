package lazyregexp

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Lazy patterns compile on first use, so a broken one would panic then,
// not at start: compile every lazyregexp.New literal in the module here.
func TestEveryLazyRegexpCompiles(t *testing.T) {
	t.Parallel()
	literal := regexp.MustCompile("lazyregexp\\.New\\(`([^`]*)`\\)")
	n := 0
	const moduleRoot = "../.."
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != moduleRoot {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			n++
			if _, err := regexp.Compile(m[1]); err != nil {
				t.Errorf("%s: lazyregexp.New(`%s`): %v", path, m[1], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("found %d lazyregexp.New patterns; the scan is broken", n)
	}
}

func TestLazyRegexp(t *testing.T) {
	t.Parallel()
	r := New(`^a(b+)$`)
	if !r.MatchString("abb") || r.MatchString("ac") || r.FindStringSubmatch("abbb")[1] != "bbb" || r.Compiled().String() != `^a(b+)$` {
		t.Fatal("New does not behave as its pattern")
	}
	first := r.Compiled()
	if again := r.Compiled(); again != first {
		t.Fatal("compiled twice")
	}
}
