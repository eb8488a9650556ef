package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb"

	"reasonix.io/plugind/internal/fakelog"
)

func newTestLog(t *testing.T, l *fakelog.Log, mirrors []string) (*ChecksumLog, string) {
	t.Helper()
	cfg, err := ParseChecksumLog(l.Env())
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	c, err := NewChecksumLog(ChecksumLogConfig{
		Log: cfg, CacheDir: filepath.Join(home, "cache"), StateDir: filepath.Join(home, "state"),
		MirrorToken: "s3cret", MirrorURLs: mirrors, Net: NetConfig{Timeout: 5 * time.Second, Retries: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, home
}

// The mirror's token goes to the log only when the mirror serves it: a
// credential goes only to its own host.
func TestChecksumLogTokenOnlyToTheMirror(t *testing.T) {
	t.Parallel()
	digest := "sha256:" + strings.Repeat("a", 64)
	sha := strings.Repeat("1", 40)
	cases := []struct {
		name    string
		mirrors func(logURL string) []string
		sent    bool
	}{
		{"no mirror", func(string) []string { return nil }, false},
		{"the mirror serves the log", func(u string) []string { return []string{"https://elsewhere.test", strings.TrimSuffix(u, "/log")} }, true},
		{"another port", func(u string) []string { return []string{"http://127.0.0.1:1"} }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := fakelog.New(t, "log.test", func(string, string, string) (string, error) { return digest, nil })
			cl, _ := newTestLog(t, l, c.mirrors(l.URL))
			rec, err := cl.Lookup(context.Background(), "github.com/o/r", "p", sha, false)
			if err != nil || rec.Digest != digest || rec.Cached {
				t.Fatalf("lookup: %+v %v", rec, err)
			}
			auth := l.Auth()
			if got := len(auth) > 0; got != c.sent || (got && auth[0] != "Bearer s3cret") {
				t.Errorf("Authorization sent: %q, want sent=%v", auth, c.sent)
			}
		})
	}
}

// WriteConfig is a compare-and-swap: a head another process wrote in
// between is never overwritten with one that did not see it.
func TestChecksumLogWriteConfigSwaps(t *testing.T) {
	t.Parallel()
	l := fakelog.New(t, "log.test", func(string, string, string) (string, error) { return "", errors.New("unused") })
	cl, home := newTestLog(t, l, nil)
	ops := cl.ops
	if got, err := ops.ReadConfig("log.test/latest"); err != nil || len(got) != 0 {
		t.Fatalf("no head yet: %q %v", got, err)
	}
	if err := ops.WriteConfig("log.test/latest", nil, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := ops.WriteConfig("log.test/latest", []byte("stale"), []byte("two")); !errors.Is(err, sumdb.ErrWriteConflict) {
		t.Fatalf("a stale swap: %v, want ErrWriteConflict", err)
	}
	if err := ops.WriteConfig("log.test/latest", []byte("one"), []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "state", "log.test", "latest")); string(b) != "two" {
		t.Errorf("head %q, want two", b)
	}
	if _, err := ops.ReadCache("../../escape"); err == nil {
		t.Error("a cache name leading out of the folder was read")
	}
}

// BenchmarkChecksumLogCachedLookup is what a re-plan pays per record once
// the home's verified records are read.
func BenchmarkChecksumLogCachedLookup(b *testing.B) {
	digest := "sha256:" + strings.Repeat("a", 64)
	l := fakelog.New(b, "log.test", func(string, string, string) (string, error) { return digest, nil })
	cfg, err := ParseChecksumLog(l.Env())
	if err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	cl, err := NewChecksumLog(ChecksumLogConfig{Log: cfg, CacheDir: filepath.Join(home, "cache"), StateDir: filepath.Join(home, "state")})
	if err != nil {
		b.Fatal(err)
	}
	sha := strings.Repeat("1", 40)
	if _, err := cl.Lookup(context.Background(), "github.com/o/r", "plugins/p", sha, false); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec, err := cl.Lookup(context.Background(), "github.com/o/r", "plugins/p", sha, true)
		if err != nil || !rec.Cached {
			b.Fatal(rec, err)
		}
	}
}

// A record verified once is read back by the next process from the
// verified file alone, offline or not; a damaged line costs only itself.
func TestChecksumLogVerifiedRecords(t *testing.T) {
	t.Parallel()
	digest := "sha256:" + strings.Repeat("b", 64)
	l := fakelog.New(t, "log.test", func(string, string, string) (string, error) { return digest, nil })
	cl, home := newTestLog(t, l, nil)
	shas := []string{strings.Repeat("1", 40), strings.Repeat("2", 40)}
	for _, sha := range shas {
		if _, err := cl.Lookup(context.Background(), "github.com/o/r", "p", sha, false); err != nil {
			t.Fatal(err)
		}
	}
	verified := filepath.Join(home, "cache", "log.test", "verified")
	data, err := os.ReadFile(verified)
	if err != nil || strings.Count(string(data), "\n") != 2 {
		t.Fatalf("verified: %q %v", data, err)
	}
	// The lookups the sumdb client cached are gone; one line is torn.
	if err := os.RemoveAll(filepath.Join(home, "cache", "log.test", "lookup")); err != nil {
		t.Fatal(err)
	}
	torn := strings.Replace(string(data), shas[1], shas[1][:20], 1)
	if err := os.WriteFile(verified, []byte("garbage\n"+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ := ParseChecksumLog(l.Env())
	next, err := NewChecksumLog(ChecksumLogConfig{Log: cfg, CacheDir: filepath.Join(home, "cache"), StateDir: filepath.Join(home, "state")})
	if err != nil {
		t.Fatal(err)
	}
	l.Reset()
	rec, err := next.Lookup(context.Background(), "github.com/o/r", "p", shas[0], true)
	if err != nil || !rec.Cached || rec.Digest != digest || rec.TreeSize < 1 {
		t.Fatalf("offline, from the verified file: %+v %v", rec, err)
	}
	if _, err := next.Lookup(context.Background(), "github.com/o/r", "p", shas[1], true); err == nil {
		t.Fatal("a torn line answered")
	}
	if _, err := next.Lookup(context.Background(), "github.com/o/r", "p", shas[1], false); err != nil {
		t.Fatal(err)
	}
	if n := l.Lookups(); n != 1 {
		t.Errorf("%d lookups, want 1 (the torn record's)", n)
	}
}
