package host

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakelog"
)

// rewriteLookups replaces old with new in the answers of /lookup/.
type rewriteLookups struct{ old, new string }

func (rw rewriteLookups) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !strings.Contains(r.URL.Path, "/lookup/") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	body = bytes.Replace(body, []byte(rw.old), []byte(rw.new), 1)
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// A lookup answer whose record is not the one its own signed tree holds
// (altered on the way, or by a log that cannot sign another tree) is a
// SECURITY ERROR showing the record as answered and the tree, not a log
// that cannot be read; asked again, the log's honest answer is taken.
func TestChecksumLogAlteredAnswerIsASecurityError(t *testing.T) {
	t.Parallel()
	honest, forged := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("f", 64)
	sha := strings.Repeat("1", 40)
	l := fakelog.New(t, "log.test", func(string, string, string) (string, error) { return honest, nil })
	cfg, err := ParseChecksumLog(l.Env())
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	open := func(rt http.RoundTripper) *ChecksumLog {
		c, err := NewChecksumLog(ChecksumLogConfig{
			Log: cfg, CacheDir: filepath.Join(home, "cache"), StateDir: filepath.Join(home, "state"),
			Net: NetConfig{Timeout: 5 * time.Second, Retries: 1}, Transport: rt,
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	_, err = open(rewriteLookups{honest, forged}).Lookup(context.Background(), "github.com/o/r", "p", sha, false)
	if !errors.Is(err, ErrLogSecurity) || plugind.CodeOf(err) != plugind.CodeDigestMismatch {
		t.Fatalf("an altered answer: %s %v, want a security error", plugind.CodeOf(err), err)
	}
	for _, want := range []string{"github.com/o/r/p@" + sha, "answered:     record #0: github.com/o/r/-/p " + sha + " " + forged, "signed tree of 1 records, hash ", "altered it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	rec, err := open(nil).Lookup(context.Background(), "github.com/o/r", "p", sha, false)
	if err != nil || rec.Digest != honest || rec.Cached {
		t.Fatalf("asked again, untampered: %+v %v", rec, err)
	}
}
