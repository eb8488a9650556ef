package host

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sync/semaphore"

	"reasonix.io/plugind"
	"reasonix.io/plugind/checksumlog"
)

// The checksum log (SPEC §17) is checked with Go's own sumdb client:
// every record it answers is proven included in a signed tree head, and
// every tree head proven to extend the one remembered before, so a log
// that shows different histories to different clients is caught.
var (
	// ErrLogSecurity marks a refusal on the log's word: the content
	// differs from its record, or the log forked.
	ErrLogSecurity = errors.New("SECURITY ERROR")
	// ErrLogUnavailable marks a log that could not answer: the install
	// fails closed.
	ErrLogUnavailable = errors.New("the checksum log could not be read")
)

// ChecksumLogConfig is how a client reaches its checksum log.
type ChecksumLogConfig struct {
	Log *ChecksumLogTarget // REASONIX_CHECKSUM_LOG
	// CacheDir keeps the verified tiles and lookups
	// ($REASONIX_HOME/cache/checksumlog); StateDir the latest signed tree
	// head of each log ($REASONIX_HOME/checksumlog).
	CacheDir, StateDir string
	// MirrorToken is sent, as a bearer token, only when the log's origin
	// is one of MirrorURLs' (the team mirror serves the log at
	// MIRROR/log): a credential goes only to its own host.
	MirrorToken string
	MirrorURLs  []string
	Net         NetConfig
	// Transport overrides the connection pool (tests).
	Transport http.RoundTripper
	// Parallel bounds the lookups in flight at once (default 8).
	Parallel int
}

// ChecksumLog answers the log's record of a tree, verified.
type ChecksumLog struct {
	cfg      *ChecksumLogTarget
	ops      *logOps
	verified *verifiedRecords
	sem      *semaphore.Weighted
	mu       sync.Mutex
	c        *sumdb.Client
	vers     note.Verifiers
}

// NewChecksumLog returns the client of cfg.Log.
func NewChecksumLog(cfg ChecksumLogConfig) (*ChecksumLog, error) {
	if cfg.Log == nil || cfg.CacheDir == "" || cfg.StateDir == "" {
		return nil, fmt.Errorf("checksum log: no log, cache or state folder given")
	}
	cfg.Net = cfg.Net.withDefaults()
	rt := cfg.Transport
	if rt == nil {
		rt = NewTransport(cfg.Net)
	}
	base := cfg.Log.URL.String()
	origin := cfg.Log.URL.Scheme + "://" + cfg.Log.URL.Host
	client := NewRetryingClient(rt, cfg.Net)
	// A redirect elsewhere loses the token (OriginOnly).
	client.HTTPClient = OriginOnly(client.HTTPClient, origin)
	ops := &logOps{
		base: base, key: cfg.Log.VerifierKey, client: client.Client, timeout: cfg.Net.Timeout,
		cacheDir: cfg.CacheDir, stateDir: cfg.StateDir, log: cfg.Net.Log, fresh: map[string][]byte{},
	}
	for _, m := range cfg.MirrorURLs {
		if sameOrigin(cfg.Log.URL, m) {
			ops.token = cfg.MirrorToken
		}
	}
	verified, err := local(cfg.CacheDir, cfg.Log.Name()+"/verified")
	if err != nil {
		return nil, err
	}
	l := &ChecksumLog{
		cfg: cfg.Log, ops: ops, verified: &verifiedRecords{path: verified},
		sem: semaphore.NewWeighted(int64(cmp.Or(cfg.Parallel, 8))), vers: note.VerifierList(cfg.Log.Verifier),
	}
	l.c = sumdb.NewClient(ops)
	return l, nil
}

// Name is the log's name, from its key.
func (l *ChecksumLog) Name() string { return l.cfg.Name() }

// URL is where the log is.
func (l *ChecksumLog) URL() string { return l.ops.base }

// LogRecord is the log's record of a tree, with what proves it: its id
// and the signed tree head it was answered with.
type LogRecord struct {
	checksumlog.Record
	ID       int64
	TreeSize int64
	TreeHash tlog.Hash
	// Cached: the record was verified by an earlier lookup and read back
	// from the home; nothing was asked of the log.
	Cached bool
}

// Lookup returns the log's record of the tree at path ("" the root) of
// commit of the repository at place. A record this home verified before
// is read back without asking the log (a warm re-plan sends nothing);
// offline, that is the only answer, and a record never verified is
// install.offline_miss. An unknown record is added by the log's server,
// which fetches and verifies the commit itself, so Lookup only asks.
func (l *ChecksumLog) Lookup(ctx context.Context, place, path, commit string, offline bool) (*LogRecord, error) {
	k := LogKey{Place: place, Path: path, Commit: commit}
	if rec, ok, err := l.known(k); ok || err != nil {
		return rec, err
	}
	if offline {
		return nil, plugind.Errorf(plugind.CodeOfflineMiss, "offline: the checksum log's record of %s is not cached (an online plan verifies it once): %w", k, ErrOffline)
	}
	return l.ask(ctx, k)
}

// LogKey names a record: the tree at Path ("" the root) of commit Commit
// of the repository at Place.
type LogKey struct{ Place, Path, Commit string }

func (k LogKey) String() string { return checksumlog.KeyOf(k.Place, k.Path, k.Commit) }

// escaped is k's log path escaped as the protocol carries it.
func (k LogKey) escaped() (logPath, escaped string, err error) {
	lp := checksumlog.LogPath(k.Place, k.Path)
	epath, err := module.EscapePath(lp)
	if err != nil {
		return "", "", plugind.Errorf(plugind.CodeInvalidSource, "checksum log: %s cannot be looked up: %v", k, err)
	}
	return lp, epath, nil
}

// known is the record of k this home verified before, asking nothing.
func (l *ChecksumLog) known(k LogKey) (*LogRecord, bool, error) {
	lp, epath, err := k.escaped()
	if err != nil {
		return nil, false, err
	}
	if rec, ok := l.verified.get(lp, k.Commit); ok {
		return rec, true, nil
	}
	if data, err := l.ops.ReadCache(l.lookupFile(epath, k.Commit)); err == nil {
		// Written only once the sumdb client had verified it, in the
		// user's private home: it is read back without checking the
		// head's signature again (that costs 0.2 ms a record).
		if rec, err := l.parse(data, lp, k.Commit, false); err == nil {
			rec.Cached = true
			l.remember(rec)
			return rec, true, nil
		}
		// A damaged cache file is asked again.
	}
	return nil, false, nil
}

// lookupFile is where the sumdb client caches a lookup's answer.
func (l *ChecksumLog) lookupFile(epath, commit string) string {
	return l.Name() + "/lookup/" + epath + "@" + commit
}

// ask looks k up in the log: one request, proven by the sumdb client.
func (l *ChecksumLog) ask(ctx context.Context, k LogKey) (*LogRecord, error) {
	key, commit := k.String(), k.Commit
	lp, epath, err := k.escaped()
	if err != nil {
		return nil, err
	}
	file := l.lookupFile(epath, commit)
	if err := l.sem.Acquire(ctx, 1); err != nil {
		return nil, plugind.WithCode(plugind.CodeCancelled, err)
	}
	c := l.client()
	lines, err := c.Lookup(lp, commit)
	l.sem.Release(1)
	answer := l.ops.answer("/lookup/" + epath + "@" + commit) // a commit id escapes as itself
	if msg := l.ops.securityMessage(); msg != "" {
		return nil, plugind.Errorf(plugind.CodeDigestMismatch, "checksum log %s: verifying %s:\n\n%w\n%s", l.Name(), key, ErrLogSecurity, l.forkMessage(msg))
	}
	if err != nil && strings.Contains(err.Error(), unauthenticated) {
		l.renew(c)
		return nil, plugind.Errorf(plugind.CodeDigestMismatch, "checksum log %s: verifying %s:\n%s\n%w\n%s", l.Name(), key, l.forgedMessage(answer), ErrLogSecurity,
			"The record the log answered is not the one its own signed tree holds: the log, a mirror\n"+
				"serving it, or something in between altered it. Nothing was installed.")
	}
	if err != nil {
		// The sumdb client remembers a failed lookup for its lifetime: a
		// daemon asks again with a fresh one (the tree head it trusts is
		// re-read from the home).
		l.renew(c)
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "checksum log %s at %s: looking up %s: %v (the install fails closed while the log cannot be read): %w", l.Name(), l.URL(), key, err, ErrLogUnavailable)
	}
	data := l.ops.lookup(file)
	if data == nil {
		data, _ = l.ops.ReadCache(file) // another process verified it first
	}
	rec, err := l.parse(data, lp, commit, true)
	if err != nil || len(lines) != 1 {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "checksum log %s at %s: the record of %s cannot be read (%d lines): %v: %w", l.Name(), l.URL(), key, len(lines), err, ErrLogUnavailable)
	}
	l.remember(rec)
	return rec, nil
}

// remember keeps verified records for the next plans (verifiedRecords).
func (l *ChecksumLog) remember(recs ...*LogRecord) {
	if err := l.verified.add(recs...); err != nil {
		l.ops.log.Debug("checksum log: verified records were not remembered", "records", len(recs), "err", err)
	}
}

func (l *ChecksumLog) client() *sumdb.Client {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c
}

func (l *ChecksumLog) renew(failed *sumdb.Client) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == failed {
		l.c = sumdb.NewClient(l.ops)
	}
}

// parse reads a lookup's answer as the sumdb client cached it (record id,
// record text, signed tree head), checking the head's signature when
// verify is set.
func (l *ChecksumLog) parse(data []byte, lp, commit string, verify bool) (*LogRecord, error) {
	id, text, treeMsg, err := tlog.ParseRecord(data)
	if err != nil {
		return nil, err
	}
	// A note is its text, a blank line, then its signatures.
	head, _, ok := bytes.Cut(treeMsg, []byte("\n\n"))
	if !ok {
		return nil, fmt.Errorf("checksum log: a tree head without signatures")
	}
	if verify {
		if _, err := note.Open(treeMsg, l.vers); err != nil {
			return nil, err
		}
	}
	tree, err := tlog.ParseTree(append(head, '\n'))
	if err != nil {
		return nil, err
	}
	r, err := checksumlog.ParseText(text, lp, commit)
	if err != nil {
		return nil, err
	}
	return &LogRecord{Record: r, ID: id, TreeSize: tree.N, TreeHash: tree.Hash}, nil
}

// Check compares the digest of a tree as it was fetched (or found in the
// store) with the log's record of it: a difference is refused as Go
// refuses a module whose hash the checksum database does not confirm.
func (l *ChecksumLog) Check(rec *LogRecord, digest string) error {
	if rec.Digest == digest {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "verifying %s: checksum mismatch\n", rec.Key())
	fmt.Fprintf(&b, "\tfetched:      %s\n", digest)
	fmt.Fprintf(&b, "\tchecksum log: %s\n", rec.Digest)
	fmt.Fprintf(&b, "\tproof:        record #%d of log %s (%s), in its signed tree of %d records, hash %s\n\n", rec.ID, l.Name(), l.URL(), rec.TreeSize, rec.TreeHash)
	return plugind.Errorf(plugind.CodeDigestMismatch, "%s%w\n%s", b.String(), ErrLogSecurity,
		"This content does NOT match what the checksum log recorded for this commit.\n"+
			"The source repository or a mirror may be compromised, or an attacker may\n"+
			"have intercepted the download. Nothing was installed.")
}

// unauthenticated is how the sumdb client says that a lookup's record is
// not the one the answer's signed tree holds (its error is not exported):
// an altered answer, a security error, not a log that cannot be read.
const unauthenticated = "cannot authenticate record data in server response"

// forgedMessage shows a lookup answer whose record its tree does not hold:
// the record as answered, its id, and the signed tree head it came with.
func (l *ChecksumLog) forgedMessage(answer []byte) string {
	id, text, treeMsg, err := tlog.ParseRecord(answer)
	var tree tlog.Tree
	if err == nil {
		head, _, _ := bytes.Cut(treeMsg, []byte("\n\n"))
		tree, err = tlog.ParseTree(append(head, '\n'))
	}
	if err != nil {
		return fmt.Sprintf("\tthe log's answer (%d bytes) does not prove its record\n", len(answer))
	}
	return fmt.Sprintf("\tanswered:     record #%d: %s\tproof:        not in log %s (%s)'s signed tree of %d records, hash %s\n",
		id, strings.TrimRight(string(text), "\n")+"\n", l.Name(), l.URL(), tree.N, tree.Hash)
}

// forkMessage is the sumdb client's report of two tree heads that are not
// one history, told as this program's.
func (l *ChecksumLog) forkMessage(msg string) string {
	_, rest, _ := strings.Cut(msg, "misbehavior detected!\n")
	return fmt.Sprintf("The checksum log %s (%s) signed two tree heads that are not one history:\n"+
		"it, or a mirror serving it, is compromised, and shows different content to different clients.\n"+
		"Nothing was installed. One of the two heads is the one this home remembered (in %s),\n"+
		"the other the one the log answered now; Go's sumdb client calls the smaller the old.\n%s",
		l.Name(), l.URL(), l.ops.stateDir, strings.TrimRight(rest, "\n"))
}
