package main

import (
	"flag"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
)

// budgetBulk sizes TestAPIBudgetBulkInstall: ENTRIESxREPOS:BUDGET. The
// default is small enough for every run; issue 23's acceptance is
//
//	go test ./cmd/reasonix -run TestAPIBudgetBulkInstall -budget-bulk 1000x200:60
//
// (a 1,000-entry marketplace over 200 plugin repositories and its own,
// under GitHub's 60 requests an hour).
var budgetBulk = flag.String("budget-bulk", "40x8:10", "TestAPIBudgetBulkInstall's size: ENTRIESxREPOS:BUDGET")

// A cold bulk install under GitHub's REST budget (SPEC §14): the same
// digests as without one; no request over the budget — the client stops
// when an answer says nothing is left — and a second process in the same
// window, which starts with the budget spent, sends one REST request, is
// refused, and sends none after; git serves everything else. Each plan says
// so once, naming the reset and GITHUB_TOKEN. The daemon keeps the budget
// across requests: a second plan sends no REST request at all.
func TestAPIBudgetBulkInstall(t *testing.T) {
	t.Parallel()
	var entries, repos, budget int
	if _, err := fmt.Sscanf(*budgetBulk, "%dx%d:%d", &entries, &repos, &budget); err != nil {
		t.Fatalf("-budget-bulk %q: want ENTRIESxREPOS:BUDGET: %v", *budgetBulk, err)
	}
	gh := fakegithub.New(t)
	m, err := bulkmarket.Build(gh, bulkmarket.Shape{Entries: entries, Repos: repos})
	if err != nil {
		t.Fatal(err)
	}
	env := gh.Env()

	free := runBinary(t, t.TempDir(), env, "plugin", "install", m.Source, "--yes")
	want := installedDigests(t, free, entries)
	c := gh.Counts()
	t.Logf("without a budget: %d REST requests, %d git", c.API(), c.Git())
	if c.API() <= budget {
		t.Fatalf("without a budget the install made %d REST requests: a budget of %d would not limit it; make the marketplace larger", c.API(), budget)
	}

	gh.SetAPIBudget(budget, time.Hour)
	gh.ResetCounts()
	start := time.Now()
	limited := runBinary(t, t.TempDir(), env, "plugin", "install", m.Source, "--yes")
	checkSameDigests(t, "under the budget", want, installedDigests(t, limited, entries))
	checkBudgetWarning(t, "under the budget", limited.stdout, start)
	c = gh.Counts()
	t.Logf("under a budget of %d: %d REST requests, %d refused, %d git", budget, c.API(), c.APILimited, c.Git())
	if c.API() > budget || c.APILimited != 0 || c.API() < budget/2 {
		t.Errorf("under a budget of %d: %d REST requests, %d of them refused; want most of the budget used and no request over it", budget, c.API(), c.APILimited)
	}

	// Another client spends what is left, then a second install starts.
	spendAPIBudget(t, gh, budget)
	gh.ResetCounts()
	again := runBinary(t, t.TempDir(), env, "plugin", "install", m.Source, "--yes")
	checkSameDigests(t, "with the budget spent", want, installedDigests(t, again, entries))
	checkBudgetWarning(t, "with the budget spent", again.stdout, start)
	if c := gh.Counts(); c.APILimited != 1 || c.APIAfterLimited != 0 || c.API() != 1 {
		t.Errorf("with the budget spent from the start: %d REST requests, %d refused, %d after the first refusal; want 1, 1, 0", c.API(), c.APILimited, c.APIAfterLimited)
	}

	gh.ResetCounts()
	d := startDaemon(t, t.TempDir(), env)
	for i, req := range []map[string]any{{"source": m.Source}, {"source": m.Source, "replace": true}} {
		r := d.do("POST", "/plugins/plan", req)
		if r.status != 200 {
			t.Fatalf("daemon plan %d: %d %s", i, r.status, r.body)
		}
		checkBudgetWarning(t, fmt.Sprintf("daemon plan %d", i), string(r.body), start)
		if c := gh.Counts(); c.API() != 1 || c.APIAfterLimited != 0 {
			t.Errorf("daemon plan %d: %d REST requests in all, %d after the first refusal; want 1 and 0 (the budget is kept across requests)", i, c.API(), c.APIAfterLimited)
		}
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, d.stderr)
	}
}

// spendAPIBudget makes unauthenticated REST requests until the fake
// refuses one, as another client of the same address would.
func spendAPIBudget(t *testing.T, gh *fakegithub.Server, budget int) {
	t.Helper()
	for i := 0; i <= budget; i++ {
		resp, err := http.Get(gh.APIURL + "/repos/bulk/market")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusForbidden {
			return
		}
	}
	t.Fatalf("the fake never refused a request over its budget of %d", budget)
}

// installedDigests maps each plugin a bulk install installed to its
// commit and content digest, failing unless all n were installed.
func installedDigests(t *testing.T, r result, n int) map[string]string {
	t.Helper()
	acts := actionsOf(t, r)
	out := map[string]string{}
	for name, a := range acts {
		if a["status"] != "installed" {
			t.Errorf("%s: %v %v", name, a["status"], a["error"])
			continue
		}
		out[name] = fmt.Sprint(a["commit"], " ", a["contentDigest"])
	}
	if r.code != 0 || len(out) != n {
		t.Fatalf("exit %d, %d of %d installed: %.2000s\n%s", r.code, len(out), n, r.stdout, r.stderr)
	}
	return out
}

func checkSameDigests(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s is %q, without a budget %q", what, name, got[name], w)
		}
	}
}

// checkBudgetWarning: the response says once that the budget is spent,
// naming the reset (an hour after the budget's first request) and
// GITHUB_TOKEN, and no per-repository fallback warning repeats it.
func checkBudgetWarning(t *testing.T, what, body string, start time.Time) {
	t.Helper()
	if n := strings.Count(body, "GITHUB_TOKEN"); n != 1 {
		t.Errorf("%s: GITHUB_TOKEN named %d times, want once", what, n)
	}
	// The window starts with the budget's first request, some time after
	// start: the reset named is an hour after a moment between start and
	// now, to the second, whatever hour of the clock the test runs in.
	earliest, latest := start.Add(time.Hour).Truncate(time.Second), time.Now().Add(time.Hour+time.Second)
	m := regexp.MustCompile(`rate limit is spent until (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC`).FindStringSubmatch(body)
	if m == nil {
		t.Errorf("%s: no warning naming the reset (about %s)", what, earliest.UTC().Format(time.RFC3339))
	} else if reset, err := time.Parse(time.DateTime, m[1]); err != nil || reset.Before(earliest) || reset.After(latest) {
		t.Errorf("%s: the warning names the reset %s, want between %s and %s (%v)", what, m[1], earliest.UTC().Format(time.DateTime), latest.UTC().Format(time.DateTime), err)
	}
	for _, noise := range []string{"over the GitHub API failed", "over the archive failed"} {
		if strings.Contains(body, noise) {
			t.Errorf("%s: a per-repository fallback warning: %q", what, noise)
		}
	}
}

// Without git (REASONIX_GIT=off) the archive is the only way to content:
// with the budget spent, the install fails at once, naming the reset and
// GITHUB_TOKEN, sends nothing more to the API, and writes nothing.
func TestAPIBudgetSpentWithoutGit(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t, fakegithub.WithAPIBudget(1, time.Hour))
	gh.CreateRepo("acme", "tools").Commit("main", pluginTree("tools"))
	home := t.TempDir()
	env := append(gh.Env(), "REASONIX_GIT=off")
	r := runBinary(t, home, env, "plugin", "install", "https://github.com/acme/tools", "--yes")
	if got := r.json(t)["errorCode"]; r.code != 1 || got != "install.source_unreadable" {
		t.Fatalf("exit %d, errorCode %v: %s", r.code, got, r.stdout)
	}
	msg := r.json(t)["error"].(string)
	if !strings.Contains(msg, "rate limit is spent until") || !strings.Contains(msg, "GITHUB_TOKEN") || !strings.Contains(msg, "archive") {
		t.Errorf("error: %s", msg)
	}
	if c := gh.Counts(); c.API() != 1 || c.APILimited != 0 {
		t.Errorf("%d REST requests, %d refused: want the one the budget allowed, and none over it", c.API(), c.APILimited)
	}
	if state := homeState(t, home); len(state) != 0 {
		t.Errorf("the home holds %v", state)
	}
}
