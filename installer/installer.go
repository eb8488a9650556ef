package installer

import (
	"cmp"
	"log/slog"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/store"
)

// Installer is the backend shared by the CLI and the daemon, as its Config
// made it (New fills in the defaults).
type Installer struct{ Config }

// Config configures an Installer.
type Config struct {
	Home    Home
	Sources resolver.Resolver
	Budget  plugind.Budget
	Now     func() time.Time
	Log     *slog.Logger
	// Cache, when set, keeps plans by planId, so a daemon restart between
	// plan and install loses nothing; caches the manifests of read-only
	// store trees, so a warm re-plan of a large marketplace parses none of
	// them; and, with Store, forgets what it derived from a quarantined
	// snapshot.
	Cache *cache.DB
	// Store, when set, is the snapshot store Sources reads from: a staged
	// copy of one of its snapshots that fails verification quarantines that
	// snapshot, so the next plan fetches it again (see apply).
	Store *store.Store
	// StepHook is called at each named step of apply and publication
	// ("before-staging", "after-staging", "after-swap", "after-registry").
	// It exists for the crash-safety tests, which kill the process there.
	StepHook func(step string)
	// Decoded keeps the registry and the cached manifests planning
	// decoded, for the next plan: the daemon's, shared with its resolver
	// (nil: none kept).
	Decoded *cache.Decoded
	// NoWorkingDir says the caller has no working directory of its
	// client's: a relative path is refused rather than read as a folder
	// (the daemon sets it; see readSource).
	NoWorkingDir bool
	// RuntimePolicy, when set, reads the team mirror's rule for code
	// plugins fetch at run time, which every install, update and sync
	// plan applies (governRuntime); nil: no mirror, nothing to apply.
	RuntimePolicy RuntimePolicyFunc
}

// New returns an Installer.
func New(cfg Config) *Installer {
	cfg.Budget, cfg.Log = cmp.Or(cfg.Budget, plugind.DefaultBudget), cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StepHook == nil {
		cfg.StepHook = func(string) {}
	}
	return &Installer{cfg}
}
