package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/mod/sumdb"
)

// logOps is the sumdb client's world (sumdb.ClientOps): the log over HTTP,
// its verifier key, the latest signed tree head remembered in the home,
// and the tiles and lookups cached there.
//
// The tree head is state, not cache: it is what the log has promised, and
// a later head that does not extend it is a fork. It lives in stateDir
// ($REASONIX_HOME/checksumlog/NAME/latest), so clearing the cache does not
// forget it. Tiles and lookups are derived data, in cacheDir
// ($REASONIX_HOME/cache/checksumlog/NAME/…): the sumdb client writes only
// what it has verified there.
type logOps struct {
	base     string // the log's URL, protocol paths appended
	key      string // the verifier key
	token    string // sent only to the log's own origin, when it is the mirror's
	client   *retryablehttp.Client
	timeout  time.Duration
	cacheDir string
	stateDir string
	log      *slog.Logger

	mu       sync.Mutex
	security string            // the first SecurityError's message
	fresh    map[string][]byte // lookups this process verified, by cache name
	answers  map[string][]byte // lookup answers as read, by remote path, until taken (answer)
}

// maxLogAnswer bounds what one answer of the log may hold: a lookup is a
// record and a signed note, a tile at most 2^8 hashes or records.
const maxLogAnswer = 1 << 20

// ReadRemote implements sumdb.ClientOps.
func (o *logOps) ReadRemote(path string) ([]byte, error) {
	// The client's operations carry no context: each request is bounded
	// on its own (the transport bounds connecting, headers and retries).
	ctx, cancel := context.WithTimeout(context.Background(), 4*o.timeout)
	defer cancel()
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, o.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("checksum log %s: %w", o.base, err)
	}
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxLogAnswer+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("GET %s: %w", path, err)
	case resp.StatusCode != http.StatusOK:
		msg := strings.TrimSpace(string(data[:min(len(data), 200)]))
		return nil, fmt.Errorf("GET %s: %s: %q", path, resp.Status, msg)
	case len(data) > maxLogAnswer:
		return nil, fmt.Errorf("GET %s: the answer exceeds %d bytes", path, maxLogAnswer)
	}
	if strings.HasPrefix(path, "/lookup/") {
		o.mu.Lock()
		if o.answers == nil {
			o.answers = map[string][]byte{}
		}
		o.answers[path] = data
		o.mu.Unlock()
	}
	return data, nil
}

// ReadConfig implements sumdb.ClientOps: "key" is the verifier key, and
// NAME/latest the latest tree head remembered ("" before the first).
func (o *logOps) ReadConfig(file string) ([]byte, error) {
	if file == "key" {
		return []byte(o.key), nil
	}
	p, err := local(o.stateDir, file)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return []byte{}, nil
	}
	return data, err
}

// WriteConfig implements sumdb.ClientOps: a compare-and-swap under a file
// lock, so two processes sharing a home (the CLI beside the daemon) never
// lose a tree head one of them saw.
func (o *logOps) WriteConfig(file string, old, new []byte) error {
	p, err := local(o.stateDir, file)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("checksum log: remember the tree head: %w", err)
	}
	lock := flock.New(p + ".lock")
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("checksum log: lock %s: %w", p, err)
	}
	defer func() { _ = lock.Unlock() }()
	cur, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checksum log: read %s: %w", p, err)
	}
	if !bytes.Equal(cur, old) {
		return sumdb.ErrWriteConflict
	}
	return writeReplacing(p, new, true)
}

// ReadCache implements sumdb.ClientOps.
func (o *logOps) ReadCache(file string) ([]byte, error) {
	p, err := local(o.cacheDir, file)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// WriteCache implements sumdb.ClientOps. The client calls it only with
// what it verified; a failure costs a request next time, nothing more.
func (o *logOps) WriteCache(file string, data []byte) {
	if strings.Contains(file, "/lookup/") {
		o.mu.Lock()
		o.fresh[file] = data
		o.mu.Unlock()
	}
	p, err := local(o.cacheDir, file)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(p), 0o700)
	}
	if err == nil {
		err = writeReplacing(p, data, false) // derived data: not worth an fsync
	}
	if err != nil {
		o.log.Debug("checksum log: cache not written", "file", file, "err", err)
	}
}

// lookup is a lookup's answer this process verified and cached (nil when
// there is none).
func (o *logOps) lookup(file string) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.fresh[file]
}

// answer takes the lookup answer read for path, as it came, so a refusal
// can show what the log answered (nil when it was not read by this
// process, or was taken already).
func (o *logOps) answer(path string) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	a := o.answers[path]
	delete(o.answers, path)
	return a
}

// Log implements sumdb.ClientOps.
func (o *logOps) Log(msg string) { o.log.Debug("checksum log: " + msg) }

// SecurityError implements sumdb.ClientOps: the message (the two tree
// heads and the proof that they fork) is kept for the refusal to show.
func (o *logOps) SecurityError(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.security == "" {
		o.security = msg
	}
	o.log.Error("checksum log: " + msg)
}

func (o *logOps) securityMessage() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.security
}

// local is file (a slash name the sumdb client chose, under the log's
// name, which comes from the verifier key) below dir, refused when it
// would lead out of it.
func local(dir, file string) (string, error) {
	p := filepath.FromSlash(file)
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("checksum log: %q is not a name below %s", file, dir)
	}
	return filepath.Join(dir, p), nil
}

// writeReplacing writes data to a temporary file beside p and renames it
// over p: a reader sees the old content or the new, never a part. durable
// syncs the file first, so a crash cannot leave it empty.
func writeReplacing(p string, data []byte, durable bool) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
