package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
)

func (m *Main) cacheCommand() *cobra.Command {
	c := group(&cobra.Command{Use: "cache", Short: "Inspect and maintain the snapshot store and the cache",
		Example: `  reasonix cache stats
  reasonix cache gc
  reasonix cache verify --repair`})
	var all, repair bool
	// maint wires the maintenance commands. They are about the store, so
	// an unusable store fails them; an unavailable cache does not (see
	// installer.Maintenance).
	maint := func(cmd *cobra.Command) (*installer.Maintenance, func(), error) {
		a, err := m.open(cmd.Context())
		if err != nil {
			return nil, nil, err
		}
		if a.Store == nil {
			a.Close()
			return nil, nil, fmt.Errorf("the snapshot store %s is unusable: %w", a.Home.StoreDir(), a.StoreErr)
		}
		return &installer.Maintenance{Installer: a.installer, Store: a.Store, Cache: a.Cache, CacheErr: a.CacheErr}, a.Close, nil
	}
	stats := &cobra.Command{
		Use: "stats", Short: "Store size and cache hit rates", Args: cobra.NoArgs,
		Example: "  reasonix cache stats\n  reasonix cache stats --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			mt, done, err := maint(cmd)
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer done()
			s, err := mt.Stats(cmd.Context())
			if err != nil {
				return fail(m.Stderr, err)
			}
			if m.asJSON {
				return writeJSON(m.Stdout, s)
			}
			fmt.Fprintf(m.Stdout, "store: %d snapshots, %d files, %s of %s cap\n", s.Store.Snapshots, s.Store.Files, plugind.HumanBytes(s.Store.Bytes), plugind.HumanBytes(s.Store.CapBytes))
			if s.CacheUnavailable != "" {
				fmt.Fprintf(m.Stdout, "cache: unavailable (%s)\n", s.CacheUnavailable)
				return nil
			}
			for _, kind := range []string{"ref", "snapshot", "marketplace", "plan"} {
				h := s.Cache[kind]
				fmt.Fprintf(m.Stdout, "%-12s %6d entries  %6d hits  %6d misses  hit rate %5.1f%%\n", kind, h.Rows, h.Hits, h.Misses, 100*h.Rate)
			}
			return nil
		},
	}
	gc := &cobra.Command{
		Use: "gc", Short: "Evict least recently used snapshots no installed plugin or live plan uses", Args: cobra.NoArgs,
		Example: "  reasonix cache gc\n  reasonix cache gc --all --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			mt, done, err := maint(cmd)
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer done()
			rep, err := mt.GC(cmd.Context(), all)
			if rep != nil {
				if m.asJSON {
					_ = writeJSON(m.Stdout, rep)
				} else {
					fmt.Fprintf(m.Stdout, "evicted %d snapshots, freed %s, %s remain\n", len(rep.Evicted), plugind.HumanBytes(rep.FreedBytes), plugind.HumanBytes(rep.RemainingBytes))
					if rep.QuarantineRemoved > 0 {
						fmt.Fprintf(m.Stdout, "deleted %d quarantined snapshots\n", rep.QuarantineRemoved)
					}
				}
			}
			if err != nil {
				return fail(m.Stderr, err)
			}
			return nil
		},
	}
	gc.Flags().BoolVar(&all, "all", false, "evict every snapshot that is not in use, whatever the cap")
	verify := &cobra.Command{
		Use: "verify [--repair]", Short: "Re-hash every snapshot in the store (--repair: quarantine the damaged ones)", Args: cobra.NoArgs,
		Example: "  reasonix cache verify\n  reasonix cache verify --repair",
		Long: `Verify re-hashes every snapshot in the store and reports each one whose content no longer
matches its digest, or that is no longer a plain read-only tree.

With --repair, every damaged snapshot is moved to the store's quarantine/ folder (kept a week
for inspection, then deleted by cache gc; cache gc --all deletes it at once) and the cache forgets
what it derived from it, so the next plan that needs it fetches it afresh. Stray entries are
reported and left alone. The exit status is 1 while any problem remains unrepaired.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			mt, done, err := maint(cmd)
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer done()
			if repair {
				return m.printRepair(cmd, mt, m.asJSON)
			}
			rep, err := mt.Verify(cmd.Context())
			if err != nil {
				return fail(m.Stderr, err)
			}
			if m.asJSON {
				_ = writeJSON(m.Stdout, rep)
			} else {
				fmt.Fprintf(m.Stdout, "checked %d snapshots, %d problems\n", rep.Checked, len(rep.Bad))
				for _, b := range rep.Bad {
					fmt.Fprintf(m.Stdout, "problem: %s: %s\n", safeText(b.Digest), safeText(b.Problem))
				}
			}
			if len(rep.Bad) > 0 {
				return errFailed
			}
			return nil
		},
	}
	verify.Flags().BoolVar(&repair, "repair", false, "quarantine every damaged snapshot and forget its cache records")
	c.AddCommand(stats, gc, verify)
	return c
}

// printRepair runs `cache verify --repair` and prints what it did.
func (m *Main) printRepair(cmd *cobra.Command, mt *installer.Maintenance, asJSON bool) error {
	rep, err := mt.Repair(cmd.Context())
	if err != nil {
		return fail(m.Stderr, err)
	}
	if asJSON {
		_ = writeJSON(m.Stdout, rep)
	} else {
		fmt.Fprintf(m.Stdout, "checked %d snapshots, %d problems, %d quarantined\n", rep.Checked, len(rep.Bad), len(rep.Quarantined))
		for _, b := range rep.Bad {
			fmt.Fprintf(m.Stdout, "problem: %s: %s\n", b.Digest, b.Problem)
		}
		for _, d := range rep.Quarantined {
			fmt.Fprintf(m.Stdout, "quarantined: %s (the next plan that needs it fetches it again)\n", d)
		}
		for _, b := range rep.Unrepaired {
			fmt.Fprintf(m.Stdout, "not repaired: %s: %s\n", b.Digest, b.Problem)
		}
	}
	if len(rep.Unrepaired) > 0 {
		return errFailed
	}
	return nil
}
