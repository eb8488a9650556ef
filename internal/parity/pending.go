package parity

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Pending is the list of "known differences pending issue 22 core": the
// differences from Claude that the core work of issue 22 is fixing while
// the goldens land. They are not allowed differences: the tests print
// them, and fail on an entry that no longer differs exactly so (so the list
// empties as the fixes land, and cannot go stale).
type Pending struct {
	byKey map[string]PendingEntry
}

// PendingEntry is one plugin's pending differences and their cause.
type PendingEntry struct {
	Marketplace string   `json:"marketplace"`
	Plugin      string   `json:"plugin"`
	Cause       string   `json:"cause"`
	Differences []string `json:"differences"`
}

func pendingKey(market, plugin string) string { return market + "\x00" + plugin }

// LoadPending reads the pending list: {"about", "pending": [PendingEntry…]}.
func LoadPending(path string) (Pending, error) {
	var doc struct {
		About   string         `json:"about"`
		Pending []PendingEntry `json:"pending"`
	}
	if err := readStrict(path, &doc); err != nil {
		return Pending{}, fmt.Errorf("pending differences: %w", err)
	}
	p := Pending{byKey: map[string]PendingEntry{}}
	for i, e := range doc.Pending {
		k := pendingKey(e.Marketplace, e.Plugin)
		switch {
		case e.Marketplace == "" || e.Plugin == "":
			return Pending{}, fmt.Errorf("pending differences %s: pending[%d]: marketplace and plugin are required", path, i)
		case strings.TrimSpace(e.Cause) == "":
			return Pending{}, fmt.Errorf("pending differences %s: pending[%d] (%s): no cause", path, i, e.Plugin)
		case len(e.Differences) == 0:
			return Pending{}, fmt.Errorf("pending differences %s: pending[%d] (%s): no differences", path, i, e.Plugin)
		}
		if _, dup := p.byKey[k]; dup {
			return Pending{}, fmt.Errorf("pending differences %s: pending[%d]: %s of %s twice", path, i, e.Plugin, e.Marketplace)
		}
		e.Differences = sorted(e.Differences)
		p.byKey[k] = e
	}
	return p, nil
}

// Verdict is what the comparisons of one marketplace come to.
type Verdict struct {
	// Failures are differences neither allowed nor pending, pending
	// entries that no longer match, and pending entries for plugins not
	// compared.
	Failures []string
	// Pending are the pending differences seen as listed; Allowed the
	// allowed ones; Equal counts entries without any difference.
	Pending []string
	Allowed []string
	// Unseen are reasonix's items details cannot show (DetailsBlind).
	Unseen []string
	Equal  int
}

// Judge weighs one marketplace's results against the pending list.
func (p Pending) Judge(market string, results []Result) Verdict {
	var v Verdict
	compared := map[string]bool{}
	for _, r := range results {
		compared[r.Plugin] = true
		for _, a := range r.Allowed {
			v.Allowed = append(v.Allowed, fmt.Sprintf("%s: allowed %s", r.Plugin, a))
		}
		for _, u := range r.Unseen {
			v.Unseen = append(v.Unseen, r.Plugin+": "+u)
		}
		pend, listed := p.byKey[pendingKey(market, r.Plugin)]
		switch {
		case listed && slices.Equal(pend.Differences, r.Differences):
			for _, d := range r.Differences {
				v.Pending = append(v.Pending, fmt.Sprintf("%s: %s (pending issue 22 core: %s)", r.Plugin, d, pend.Cause))
			}
		case listed && len(r.Differences) == 0:
			v.Failures = append(v.Failures, fmt.Sprintf("%s: now matches Claude Code; remove it from the pending list (was: %s)",
				r.Plugin, strings.Join(pend.Differences, "; ")))
		case listed:
			v.Failures = append(v.Failures, fmt.Sprintf("%s: differs from Claude Code: %s; the pending list says: %s",
				r.Plugin, strings.Join(r.Differences, "; "), strings.Join(pend.Differences, "; ")))
		case len(r.Differences) > 0:
			v.Failures = append(v.Failures, fmt.Sprintf("%s: differs from Claude Code: %s", r.Plugin, strings.Join(r.Differences, "; ")))
		default:
			if len(r.Allowed) == 0 {
				v.Equal++
			}
		}
	}
	for _, e := range p.byKey {
		if e.Marketplace == market && !compared[e.Plugin] {
			v.Failures = append(v.Failures, fmt.Sprintf("%s: on the pending list but not compared (no golden, or not an entry any more)", e.Plugin))
		}
	}
	sort.Strings(v.Failures)
	return v
}

// Entries lists the pending entries of one marketplace (for reports).
func (p Pending) Entries(market string) []PendingEntry {
	var out []PendingEntry
	for _, e := range p.byKey {
		if e.Marketplace == market {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Plugin < out[j].Plugin })
	return out
}

// ResultsEnv names a folder the parity tests write every marketplace's
// results into (MARKETPLACE.json), for reports and for drafting the
// pending list.
const ResultsEnv = "REASONIX_PARITY_RESULTS"

// WriteResults writes results as indented JSON.
func WriteResults(path string, results []Result) error {
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
