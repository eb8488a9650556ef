// Package mirror is the team mirror of SPEC §15: a stateless HTTP service,
// run as several replicas, that stands between an organization's machines
// and upstream (GitHub, any git host). Clients ask it for refs,
// reachability verdicts and snapshots through the host layer
// (resolver/host/mirror); it answers from PostgreSQL (package meta) and an
// S3-compatible object store (package objects), and goes upstream through
// the host stack a client has (resolver.Hosts), its host.Cached layer
// remembering in PostgreSQL, at most once per thing across all replicas:
// below that layer, a lease row names the one replica doing it (upstream.go),
// everyone else waits for what it stores, and a lease whose holder died
// expires and is taken over. An operator policy (package
// policy) refuses sources with install.blocked, and every request lands in
// the audit log.
package mirror

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/httpserve"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host"
)

// Defaults of Config.
const (
	DefaultRefTTL          = time.Minute
	DefaultNegativeTTL     = host.DefaultNegativeTTL
	DefaultLeaseTTL        = 30 * time.Second
	DefaultWaitTimeout     = 2 * time.Minute
	DefaultFetchTimeout    = 10 * time.Minute
	DefaultUpstreamLimit   = 8
	DefaultShutdownTimeout = 30 * time.Second
	// failTTL is how long a transient upstream failure is shared with the
	// requests waiting on it, so they fail with it rather than each trying
	// upstream again at once.
	failTTL = 5 * time.Second
)

// Config configures a Server. DB, Objects and Upstream are required.
type Config struct {
	DB       *meta.DB
	Objects  *objects.Store
	Upstream Upstream // how upstream is reached: app.Upstream (see Open)
	Policy   *policy.Policy
	Log      *slog.Logger
	// ReplicaID names this replica in leases and the audit log (default:
	// host name, process id and a random suffix).
	ReplicaID string
	// RefTTL is how long a resolved ref or ref listing is served without
	// asking upstream again (then one conditional request refreshes it).
	RefTTL time.Duration
	// NegativeTTL is how long "does not exist" answers are remembered.
	NegativeTTL time.Duration
	// LeaseTTL is how long a lease lasts without renewal: the time a dead
	// replica's work stays blocked before another takes it over. Holders
	// renew every LeaseTTL/3.
	LeaseTTL time.Duration
	// WaitTimeout bounds how long a request waits for another replica.
	WaitTimeout time.Duration
	// FetchTimeout bounds one upstream operation.
	FetchTimeout time.Duration
	// UpstreamLimit bounds this replica's concurrent upstream operations.
	UpstreamLimit int
	// Budget bounds a snapshot (default SPEC §8's).
	Budget plugind.Budget
	// TempDir is where fetched trees are staged (default os.TempDir()).
	TempDir string
	// LogKey signs the checksum log's tree heads (SPEC §17; ReadLogKey).
	// nil: the replica serves no log, and /log/ is not found.
	LogKey *LogKey
}

// Server is one mirror replica.
type Server struct {
	cfg   Config
	log   *slog.Logger
	m     *metrics
	local localLeases
	slots chan struct{} // upstream concurrency
	// base outlives requests: upstream work runs under it so a client
	// that gives up does not waste what others wait for. Serve cancels it
	// after shutdown.
	base   context.Context
	cancel context.CancelFunc
	// treeLists keeps, with a checksum log, the file lists of the whole
	// trees stored last, by digest (archives are immutable, so a kept list
	// never goes stale): a folder's record is cut from its tree's list,
	// which the fetch that stored the tree, or a cut of other folders from
	// it, had in hand already (checksumLog.treeFiles).
	treeLists *lru.Cache[string, []plugind.File]
	// sumLog is the checksum log it serves (nil without a LogKey).
	sumLog *checksumLog
}

// New returns a replica over cfg.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil || cfg.Objects == nil || cfg.Upstream == nil {
		return nil, errors.New("mirror: DB, Objects and Upstream are required")
	}
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	cfg.ReplicaID = cmp.Or(cfg.ReplicaID, DefaultReplicaID())
	// It names this replica in every audit row and lease.
	if err := checkText("--replica-id", cfg.ReplicaID); err != nil {
		return nil, err
	}
	cfg.RefTTL = plugind.PositiveOr(cfg.RefTTL, DefaultRefTTL)
	cfg.NegativeTTL = plugind.PositiveOr(cfg.NegativeTTL, DefaultNegativeTTL)
	cfg.LeaseTTL = plugind.PositiveOr(cfg.LeaseTTL, DefaultLeaseTTL)
	cfg.WaitTimeout = plugind.PositiveOr(cfg.WaitTimeout, DefaultWaitTimeout)
	cfg.FetchTimeout = plugind.PositiveOr(cfg.FetchTimeout, DefaultFetchTimeout)
	cfg.UpstreamLimit = plugind.PositiveOr(cfg.UpstreamLimit, DefaultUpstreamLimit)
	cfg.Budget = cmp.Or(cfg.Budget, plugind.DefaultBudget)
	cfg.TempDir = cmp.Or(cfg.TempDir, os.TempDir())
	s := &Server{
		cfg: cfg, log: cfg.Log.With("replica", cfg.ReplicaID), m: newMetrics(),
		slots: make(chan struct{}, cfg.UpstreamLimit),
		local: localLeases{held: map[string]chan struct{}{}},
	}
	if cfg.LogKey != nil {
		var err error
		if s.treeLists, err = lru.New[string, []plugind.File](keptTrees); err != nil {
			return nil, err
		}
		tiles, err := lru.New[string, []byte](keptTiles)
		if err != nil {
			return nil, err
		}
		s.sumLog = &checksumLog{s: s, signer: cfg.LogKey.Signer, appender: &logAppender{db: cfg.DB, detach: s.detach}, fullTiles: tiles}
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// keepTreeList keeps files, the list of the whole tree whose digest is
// digest, for the checksum log's records of its folders (treeLists).
func (s *Server) keepTreeList(digest string, files []plugind.File) {
	if s.treeLists != nil {
		s.treeLists.Add(digest, files)
	}
}

// DefaultReplicaID is "host/pid/random": unique per process, and telling an
// operator reading a lease or the audit log which machine and process it was.
func DefaultReplicaID() string {
	h, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", h, os.Getpid(), hex.EncodeToString(b[:]))
}

// ReplicaID returns the replica's name.
func (s *Server) ReplicaID() string { return s.cfg.ReplicaID }

// Serve answers on ln until ctx ends, then shuts down gracefully
// (httpserve.Serve): no new connections, in-flight requests get up to
// grace to finish, then upstream work is cancelled and its leases released.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	grace = plugind.PositiveOr(grace, DefaultShutdownTimeout)
	go s.sweep(ctx)
	s.log.Info("mirror serving", "addr", ln.Addr().String(), "objects", s.cfg.Objects.Where())
	if s.cfg.LogKey != nil {
		s.log.Info("serving the checksum log at /log", "verifier_key", s.cfg.LogKey.Verifier)
		if s.cfg.LogKey.Exposed {
			s.log.Warn("other users may read the checksum log's signing key; chmod 600 it", "file", s.cfg.LogKey.Path)
		}
	}
	return httpserve.Serve(ctx, &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}, ln, grace, s.cancel, s.log)
}

// sweep clears expired rows now and then.
func (s *Server) sweep(ctx context.Context) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.cfg.DB.Sweep(ctx); err != nil {
				s.log.Warn("sweep", "err", err)
			}
		}
	}
}
