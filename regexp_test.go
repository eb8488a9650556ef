package plugind

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Lazy patterns compile on first use, so a broken one would panic then,
// not at start: compile every LazyRegexp literal in the module here.
func TestEveryLazyRegexpCompiles(t *testing.T) {
	t.Parallel()
	literal := regexp.MustCompile("LazyRegexp\\(`([^`]*)`\\)")
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
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
				t.Errorf("%s: LazyRegexp(`%s`): %v", path, m[1], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("found %d LazyRegexp patterns; the scan is broken", n)
	}
}

func TestLazyRegexp(t *testing.T) {
	t.Parallel()
	r := LazyRegexp(`^a(b+)$`)
	if !r.MatchString("abb") || r.MatchString("ac") || r.FindStringSubmatch("abbb")[1] != "bbb" || r.String() != `^a(b+)$` {
		t.Fatal("LazyRegexp does not behave as its pattern")
	}
	first := r.Compiled()
	if again := r.Compiled(); again != first {
		t.Fatal("compiled twice")
	}
}
