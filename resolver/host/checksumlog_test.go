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

	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/internal/fakelog"
)

func newTestLog(t *testing.T, l *fakelog.Log, mirrors []string) (*ChecksumLog, string) {
	t.Helper()
	cfg, err := checksumlog.ParseConfig(l.Env())
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
