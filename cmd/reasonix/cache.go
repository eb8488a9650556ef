package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
)

func (m *Main) cacheCommand() *cobra.Command {
	c := &cobra.Command{Use: "cache", Short: "Inspect and maintain the snapshot store and the cache"}
	var asJSON, all bool
	maint := func(cmd *cobra.Command) (*installer.Maintenance, func(), error) {
		a, err := m.open(cmd.Context())
		if err != nil {
			return nil, nil, err
		}
		return &installer.Maintenance{Installer: a.installer, Store: a.Store, Cache: a.Cache}, a.Close, nil
	}
	stats := &cobra.Command{
		Use: "stats", Short: "Store size and cache hit rates", Args: cobra.NoArgs,
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
			if asJSON {
				return writeJSON(m.Stdout, s)
			}
			fmt.Fprintf(m.Stdout, "store: %d snapshots, %d files, %s of %s cap\n", s.Store.Snapshots, s.Store.Files, plugind.HumanBytes(s.Store.Bytes), plugind.HumanBytes(s.Store.CapBytes))
			for _, kind := range []string{"ref", "snapshot", "marketplace", "plan"} {
				h := s.Cache[kind]
				fmt.Fprintf(m.Stdout, "%-12s %6d entries  %6d hits  %6d misses  hit rate %5.1f%%\n", kind, h.Rows, h.Hits, h.Misses, 100*h.Rate)
			}
			return nil
		},
	}
	stats.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	gc := &cobra.Command{
		Use: "gc", Short: "Evict least recently used snapshots no installed plugin or live plan uses", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			mt, done, err := maint(cmd)
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer done()
			rep, err := mt.GC(cmd.Context(), all)
			if rep != nil {
				if asJSON {
					_ = writeJSON(m.Stdout, rep)
				} else {
					fmt.Fprintf(m.Stdout, "evicted %d snapshots, freed %s, %s remain\n", len(rep.Evicted), plugind.HumanBytes(rep.FreedBytes), plugind.HumanBytes(rep.RemainingBytes))
				}
			}
			if err != nil {
				return fail(m.Stderr, err)
			}
			return nil
		},
	}
	gc.Flags().BoolVar(&all, "all", false, "evict every snapshot that is not in use, whatever the cap")
	gc.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	verify := &cobra.Command{
		Use: "verify", Short: "Re-hash every snapshot in the store", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			mt, done, err := maint(cmd)
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer done()
			rep, err := mt.Verify(cmd.Context())
			if err != nil {
				return fail(m.Stderr, err)
			}
			if asJSON {
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
	verify.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.AddCommand(stats, gc, verify)
	return c
}
