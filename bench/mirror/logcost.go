package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/source"
)

// logCost measures what the checksum log (SPEC §17) costs a cold install
// of the -entries/-repos marketplace through one replica serving it
// (issue 27's target: within 1.1× of one without):
//
//   - pairs of first installs: a fresh marketplace each, the mirror cold —
//     without the log, then with it (its records appended as the machine
//     asks), and the ratio of the medians;
//   - then runs pairs of cold machines (empty homes) on a warm mirror,
//     without and with the log (every record known), in turn, and prints
//     each time and the ratio of the medians;
//   - a warm re-plan of a machine that installed with the log: the log
//     requests the replica audited during it (the target is none).
func logCost(ctx context.Context, o options, eng *mirrortest.Engines, up *resolver.Hosts, token string, gh *fakegithub.Server, tmp string) error {
	keyPath := filepath.Join(tmp, "log.key")
	if _, err := mirror.CreateLogKey("bench.example.test", keyPath); err != nil {
		return err
	}
	key, err := mirror.ReadLogKey(keyPath)
	if err != nil {
		return err
	}
	rep, err := eng.Start(mirrortest.Options{Upstream: up, ReplicaID: "bench-log", RefTTL: time.Hour, LogKey: key})
	if err != nil {
		return err
	}
	defer func() { _ = rep.Stop() }()
	withLog := map[string]string{"REASONIX_CHECKSUM_LOG": key.Verifier + " " + rep.URL + "/log"}
	n := 0
	machine := func(env map[string]string, src string) (time.Duration, string, error) {
		n++
		home := filepath.Join(tmp, fmt.Sprintf("logcost-%03d", n))
		start := time.Now()
		d, err := mirrortest.InstallThroughMirror(ctx, home, []string{rep.URL}, token, env, gh, src)
		if err == nil && len(d) != o.entries {
			err = fmt.Errorf("installed %d plugins, want %d", len(d), o.entries)
		}
		return time.Since(start), home, err
	}

	fmt.Printf("\nchecksum log cost: cold %d-entry / %d-repo installs (one machine at a time) through one replica\n", o.entries, o.repos+1)
	median := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	// Each pair of first installs is of two fresh marketplaces, so the
	// mirror is cold for both; the last one with the log is the one the
	// warm runs install again.
	var logged string
	var coldWithout, coldWith []time.Duration
	for i := range o.logCost {
		var pair [2]string
		for j, owner := range []string{"costplain", "costlog"} {
			src, err := bulkmarket.Fleet(gh, fmt.Sprintf("%s%d", owner, i), o.entries, o.repos)
			if err != nil {
				return err
			}
			pair[j] = src
		}
		first, _, err := machine(nil, pair[0])
		if err != nil {
			return err
		}
		firstLog, _, err := machine(withLog, pair[1])
		if err != nil {
			return err
		}
		logged = pair[1]
		coldWithout, coldWith = append(coldWithout, first), append(coldWith, firstLog)
		fmt.Printf("first install %d, mirror cold: without the log %s, with it (%d records appended) %s: %.2f×\n",
			i+1, first.Round(time.Millisecond), o.entries, firstLog.Round(time.Millisecond), firstLog.Seconds()/first.Seconds())
	}
	fmt.Printf("median of %d, mirror cold: without the log %s, with it %s: %.2f×\n", o.logCost,
		median(coldWithout).Round(time.Millisecond), median(coldWith).Round(time.Millisecond), median(coldWith).Seconds()/median(coldWithout).Seconds())

	var without, with []time.Duration
	var lastHome string
	for i := range o.logCost {
		a, _, err := machine(nil, logged)
		if err != nil {
			return err
		}
		b, home, err := machine(withLog, logged)
		if err != nil {
			return err
		}
		without, with, lastHome = append(without, a), append(with, b), home
		fmt.Printf("run %d, mirror warm: without the log %s, with it %s: %.2f×\n", i+1, a.Round(time.Millisecond), b.Round(time.Millisecond), b.Seconds()/a.Seconds())
	}
	fmt.Printf("median of %d, mirror warm: without the log %s, with it %s: %.2f×\n", o.logCost,
		median(without).Round(time.Millisecond), median(with).Round(time.Millisecond), median(with).Seconds()/median(without).Seconds())

	before, err := logRequests(ctx, eng.DB)
	if err != nil {
		return err
	}
	a, err := mirrortest.OpenClient(ctx, lastHome, map[string]string{
		"REASONIX_MIRROR": rep.URL, "REASONIX_MIRROR_TOKEN": token, "REASONIX_CHECKSUM_LOG": withLog["REASONIX_CHECKSUM_LOG"],
	}, gh, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	parsed, err := source.Parse(logged)
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := a.Installer.Install(ctx, installer.Request{Source: parsed}, installer.Approval{DryRun: true}); err != nil {
		return fmt.Errorf("warm re-plan: %w", err)
	}
	took := time.Since(start)
	after, err := logRequests(ctx, eng.DB)
	if err != nil {
		return err
	}
	fmt.Printf("warm re-plan with the log: %s, %d log requests audited by the replica\n", took.Round(time.Millisecond), after-before)
	if after != before {
		return fmt.Errorf("a warm re-plan sent %d requests to the log, want 0", after-before)
	}
	return nil
}

// logRequests counts the log requests the mirror audited.
func logRequests(ctx context.Context, db *meta.DB) (int, error) {
	rows, err := db.AuditLog(ctx, meta.AuditFilter{Limit: 1 << 24})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		if strings.HasPrefix(r.Action, "log.") {
			n++
		}
	}
	return n, nil
}
