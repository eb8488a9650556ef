package fakegithub

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// corpusTB stands in for the test CorpusDir is handed, recording how it
// ended. Skip and Fatal end the goroutine, as the real ones do.
type corpusTB struct {
	testing.TB
	skipped, failed string
}

func (r *corpusTB) Helper() {}

func (r *corpusTB) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *corpusTB) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

// corpusDir runs CorpusDir against a recorder on its own goroutine.
func corpusDir() (dir string, rec *corpusTB) {
	rec = &corpusTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		dir = CorpusDir(rec)
	}()
	<-done
	return dir, rec
}

func TestCorpusDirUnset(t *testing.T) {
	t.Setenv(CorpusEnv, "")
	if dir, ok, err := LookupCorpus(); dir != "" || ok || err != nil {
		t.Fatalf("LookupCorpus() = %q, %v, %v; want unset", dir, ok, err)
	}
	dir, rec := corpusDir()
	if rec.skipped != "skipped: REASONIX_CORPUS not set" || rec.failed != "" || dir != "" {
		t.Errorf("CorpusDir: dir %q, skipped %q, failed %q", dir, rec.skipped, rec.failed)
	}
}

func TestCorpusDirSet(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	abs := t.TempDir()
	file := filepath.Join(abs, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, value string
		want        string   // the directory returned; "" when it fails
		errs        []string // substrings of the failure
	}{
		{"absolute", abs, abs, nil},
		// Tests run in their package directory; a relative value is the
		// module root's, whichever package reads it.
		{"relative to the module root", filepath.Join("internal", "fakegithub"), wd, nil},
		{"missing", filepath.Join(abs, "nope"), "", []string{CorpusEnv, "nope", "cannot be read"}},
		{"missing relative", "no-such-corpus", "", []string{`REASONIX_CORPUS="no-such-corpus"`, "cannot be read"}},
		{"a file", file, "", []string{"is not a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(CorpusEnv, tc.value)
			dir, ok, err := LookupCorpus()
			got, rec := corpusDir()
			if tc.want != "" {
				if err != nil || !ok || dir != tc.want {
					t.Fatalf("LookupCorpus() = %q, %v, %v; want %q", dir, ok, err, tc.want)
				}
				if got != tc.want || rec.skipped != "" || rec.failed != "" {
					t.Errorf("CorpusDir: dir %q, skipped %q, failed %q", got, rec.skipped, rec.failed)
				}
				return
			}
			if err == nil || ok || dir != "" {
				t.Fatalf("LookupCorpus() = %q, %v, %v; want an error", dir, ok, err)
			}
			for _, s := range tc.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			// Set but unusable fails the test: it must not pass by skipping.
			if rec.failed != err.Error() || rec.skipped != "" || got != "" {
				t.Errorf("CorpusDir: dir %q, skipped %q, failed %q", got, rec.skipped, rec.failed)
			}
		})
	}
}

func TestCorpusDirOutsideModule(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(CorpusEnv, "corpus")
	_, ok, err := LookupCorpus()
	if err == nil || ok || !strings.Contains(err.Error(), "no go.mod in") {
		t.Fatalf("LookupCorpus() outside the module = %v, %v; want a no go.mod error", ok, err)
	}
}
