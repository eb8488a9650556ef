package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
)

// TestRESTReachable: a commit is on a branch or tag when a compare with
// one says it is behind it or identical: the hint first, the default
// branch, then the tips and up to eight other refs; a compare with the
// default branch that 404s means the repository has no such commit.
func TestRESTReachable(t *testing.T) {
	t.Parallel()
	const (
		ahead  = "ahead"
		behind = "behind"
		gone   = "404"
	)
	for _, tc := range []struct {
		name     string
		hint     string
		compares map[string]string // base → status; missing: "diverged"
		branches int               // how many other branches there are
		tip      bool              // the commit is one branch's tip
		want     error
		says     string
		asked    []string // compares made, in order
	}{{
		name: "behind the hint", hint: "v1", compares: map[string]string{"v1": behind},
		asked: []string{"v1"},
	}, {
		name: "the default branch itself", compares: map[string]string{"HEAD": "identical"},
		asked: []string{"HEAD"},
	}, {
		name: "a hint that is gone, then the default branch", hint: "old", compares: map[string]string{"old": gone, "HEAD": behind},
		asked: []string{"old", "HEAD"},
	}, {
		name: "the tip of another branch", compares: map[string]string{"HEAD": ahead}, branches: 3, tip: true,
		asked: []string{"HEAD"},
	}, {
		name: "behind another branch", compares: map[string]string{"HEAD": ahead, "b02": behind}, branches: 3,
		asked: []string{"HEAD", "b00", "b01", "b02"},
	}, {
		name: "on no branch of twelve: eight compared", compares: map[string]string{"HEAD": ahead}, branches: 12,
		want: host.ErrUnreachable, says: "(compared with the default branch and 8 other refs); GitHub serves commits of any fork",
		asked: []string{"HEAD", "b00", "b01", "b02", "b03", "b04", "b05", "b06", "b07"},
	}, {
		name: "not in the repository", compares: map[string]string{"HEAD": gone},
		want: host.ErrCommitNotFound, says: "commit " + shaC + ": commit not found in the repository github.com/acme/tools",
		asked: []string{"HEAD"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newAPIServer(t)
			s.repoExists()
			for base, st := range tc.compares {
				st := st
				s.on("GET /repos/acme/tools/compare/"+base+"..."+shaC, func(w http.ResponseWriter, r *http.Request) {
					if st == gone {
						status(http.StatusNotFound)(w, r)
						return
					}
					writeJSON(w, http.StatusOK, map[string]string{"status": st})
				})
			}
			var branches []map[string]any
			branches = append(branches, map[string]any{"name": "main", "commit": map[string]string{"sha": shaA}})
			for i := range tc.branches {
				commit := shaB
				if tc.tip && i == tc.branches-1 {
					commit = shaC
				}
				branches = append(branches, map[string]any{"name": fmt.Sprintf("b%02d", i), "commit": map[string]string{"sha": commit}})
			}
			s.on("GET /repos/acme/tools/branches", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, branches) })
			s.on("GET /repos/acme/tools/tags", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, []any{}) })
			// Any compare not scripted: the commit went its own way.
			for i := range tc.branches {
				base := fmt.Sprintf("b%02d", i)
				if _, ok := tc.compares[base]; !ok {
					s.on("GET /repos/acme/tools/compare/"+base+"..."+shaC, func(w http.ResponseWriter, r *http.Request) {
						writeJSON(w, http.StatusOK, map[string]string{"status": "diverged"})
					})
				}
			}
			err := openREST(t, s, "").Reachable(context.Background(), shaC, tc.hint)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("%v, want %v", err, tc.want)
			}
			if err != nil && (plugind.CodeOf(err) != plugind.CodeNotFound || !strings.Contains(err.Error(), tc.says)) {
				t.Errorf("%v: want install.not_found saying %q", err, tc.says)
			}
			var asked []string
			for _, r := range s.requests() {
				if base, ok := strings.CutPrefix(r, "GET /repos/acme/tools/compare/"); ok {
					asked = append(asked, strings.TrimSuffix(base, "..."+shaC))
				}
			}
			if strings.Join(asked, " ") != strings.Join(tc.asked, " ") {
				t.Errorf("compared with %q, want %q", asked, tc.asked)
			}
		})
	}
}
