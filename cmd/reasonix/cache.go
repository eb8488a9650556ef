package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"reasonix.io/plugind"
	"reasonix.io/plugind/app"
	"reasonix.io/plugind/cache/maintain"
)

func (m *Main) cacheCommand() *cobra.Command {
	c := group(&cobra.Command{Use: "cache", Short: "Inspect and maintain the snapshot store and the cache",
		Example: `  reasonix cache stats
  reasonix cache gc
  reasonix cache verify --repair`})
	var all, repair bool
	// maint wires the maintenance commands. They are about the store, so
	// an unusable store fails them; an unavailable cache does not (see
	// maintain.Maintenance).
	maint := func(cmd *cobra.Command) (*maintain.Maintenance, func(), error) {
		open := m.open
		if cmd.Name() == "stats" || (cmd.Name() == "verify" && !repair) {
			open = m.openToRead
		}
		a, err := open(cmd.Context())
		if err != nil {
			return nil, nil, err
		}
		if a.Store == nil {
			a.Close()
			if errors.Is(a.StoreErr, app.ErrNoHome) {
				return nil, nil, fmt.Errorf("nothing to look at in %s: %w", a.Home.Dir, a.StoreErr)
			}
			return nil, nil, fmt.Errorf("the snapshot store %s is unusable: %w", a.Home.StoreDir(), a.StoreErr)
		}
		return a.Maintenance(), a.Close, nil
	}
	stats := &cobra.Command{
		Use: "stats", Short: "Store size and cache hit rates", Args: cobra.NoArgs,
		Example: "  reasonix cache stats\n  reasonix cache stats --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			mt, done, err := maint(cmd)
			if errors.Is(err, app.ErrNoHome) {
				fmt.Fprintf(m.Stdout, "store: empty (%v)\n", err)
				return nil
			}
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
				rate := "no lookups yet"
				if h.Hits+h.Misses > 0 {
					rate = fmt.Sprintf("hit rate %.1f%%", 100*h.Rate)
				}
				fmt.Fprintf(m.Stdout, "%-12s %6d entries  %6d hits  %6d misses  %s\n", kind, h.Rows, h.Hits, h.Misses, rate)
			}
			return nil
		},
	}
	gc := &cobra.Command{
		Use: "gc", Short: "Evict least recently used snapshots no installed plugin or live plan uses", Args: cobra.NoArgs,
		Example: "  reasonix cache gc\n  reasonix cache gc --all --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			con := m.consoleFor(m.Stderr)
			mt, done, err := maint(cmd)
			if err != nil {
				return con.failed("nothing evicted", err)
			}
			defer done()
			rep, err := mt.GC(cmd.Context(), all)
			if rep != nil && m.asJSON {
				_ = writeJSON(m.Stdout, rep)
			}
			if err != nil {
				return con.failed("gc stopped", err)
			}
			if rep.QuarantineRemoved > 0 {
				con.line("deleted %s", plural(rep.QuarantineRemoved, "quarantined snapshot"))
			}
			con.ok("evicted %s, freed %s, %s remain", plural(len(rep.Evicted), "snapshot"), plugind.HumanBytes(rep.FreedBytes), plugind.HumanBytes(rep.RemainingBytes))
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
			if errors.Is(err, app.ErrNoHome) && !repair {
				fmt.Fprintf(m.Stdout, "checked 0 snapshots, 0 problems (%v)\n", err)
				return nil
			}
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer done()
			if repair {
				return m.printRepair(cmd, mt, m.asJSON)
			}
			rep, err := mt.Store.Verify(cmd.Context())
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
func (m *Main) printRepair(cmd *cobra.Command, mt *maintain.Maintenance, asJSON bool) error {
	con := m.consoleFor(m.Stderr)
	rep, err := mt.Repair(cmd.Context())
	if err != nil {
		return con.failed("nothing repaired", err)
	}
	if asJSON {
		_ = writeJSON(m.Stdout, rep)
	} else {
		fmt.Fprintf(m.Stdout, "checked %d snapshots, %d problems, %d quarantined\n", rep.Checked, len(rep.Bad), len(rep.Quarantined))
		for _, b := range rep.Bad {
			fmt.Fprintf(m.Stdout, "problem: %s: %s\n", safeText(b.Digest), safeText(b.Problem))
		}
		for _, d := range rep.Quarantined {
			fmt.Fprintf(m.Stdout, "quarantined: %s (the next plan that needs it fetches it again)\n", safeText(d))
		}
		for _, b := range rep.Unrepaired {
			fmt.Fprintf(m.Stdout, "not repaired: %s: %s\n", safeText(b.Digest), safeText(b.Problem))
		}
	}
	if len(rep.Unrepaired) > 0 {
		con.result(con.bad(markFailed+" "+fmt.Sprintf("%s not repaired", plural(len(rep.Unrepaired), "problem"))) + fmt.Sprintf(" (%s quarantined)", plural(len(rep.Quarantined), "snapshot")))
		return errFailed
	}
	con.ok("checked %s: %s quarantined (the next plan that needs them fetches them again)", plural(rep.Checked, "snapshot"), plural(len(rep.Quarantined), "snapshot"))
	return nil
}
