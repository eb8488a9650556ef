package installer

import (
	"context"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
)

// BenchmarkPlanRemote compares a cold plan (fetch everything), a warm
// re-plan (one conditional request) and an offline re-plan (no network) of
// the same GitHub source, reporting wall time and requests per plan.
//
//	go test -run '^$' -bench PlanRemote ./installer
func BenchmarkPlanRemote(b *testing.B) {
	gh := fakegithub.New(b)
	files := pluginFiles("tools", "bench")
	for i := range 200 {
		files["skills/s/ref/"+time.Duration(i).String()+".md"] = "reference text for the benchmark plugin\n"
	}
	gh.CreateRepo("acme", "tools").Commit("main", files)
	benchColdWarmOffline(b, gh, Request{Source: mustSource("git:github.com/acme/tools")})
}

// BenchmarkPlanMarketplace plans the 300-entry marketplace spread over 50
// repositories of SPEC §14: cold, warm by branch (one conditional request),
// warm pinned to the marketplace's commit (no request) and offline.
//
//	go test -run '^$' -bench PlanMarketplace -benchtime 20x ./installer
func BenchmarkPlanMarketplace(b *testing.B) {
	gh := fakegithub.New(b)
	sha := bulkMarketplace(b, gh, 300, 50)
	benchColdWarmOffline(b, gh, Request{Source: mustSource("https://github.com/bulk/market")})
	benchColdWarmOffline(b, gh, Request{Source: mustSource("https://github.com/bulk/market/tree/" + sha)})
}

func benchColdWarmOffline(b *testing.B, gh *fakegithub.Server, req Request) {
	measure := func(b *testing.B, env func(i int) *remoteEnv, offline bool) {
		b.Helper()
		gh.ResetCounts()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r := req
			r.Offline = offline
			e := env(i)
			if _, err := e.in.Install(context.Background(), r, Approval{DryRun: true}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		c := gh.Counts()
		b.ReportMetric(float64(c.Total)/float64(b.N), "requests/plan")
		b.ReportMetric(float64(c.Content())/float64(b.N), "fetches/plan")
	}
	name := "branch"
	if strings.Contains(req.Source.String(), "/tree/") {
		name = "pinned"
	}
	b.Run(name+"/cold", func(b *testing.B) {
		measure(b, func(int) *remoteEnv {
			b.StopTimer()
			defer b.StartTimer()
			return newRemoteEnv(b, gh, remoteOpts{home: b.TempDir()})
		}, false)
	})
	warm := newRemoteEnv(b, gh, remoteOpts{home: b.TempDir()})
	if _, err := warm.in.Install(context.Background(), req, Approval{DryRun: true}); err != nil {
		b.Fatal(err)
	}
	b.Run(name+"/warm", func(b *testing.B) { measure(b, func(int) *remoteEnv { return warm }, false) })
	b.Run(name+"/offline", func(b *testing.B) { measure(b, func(int) *remoteEnv { return warm }, true) })
}

// BenchmarkUpdateAll times `plugin update --all` on the 300-entry, 50-repo
// marketplace of SPEC §14 after 5 repositories moved: the first (cold)
// update fetches exactly those and writes the registry once; warm and
// offline re-plans find everything up to date.
//
//	go test -run '^$' -bench UpdateAll -benchtime 1x ./installer
func BenchmarkUpdateAll(b *testing.B) {
	for i := 0; i < b.N; i++ {
		gh := fakegithub.New(b)
		env, cold := updateAllScenario(b, gh, 300, 50, 5)
		b.ReportMetric(float64(cold.Milliseconds()), "ms/cold-update")
		for _, offline := range []bool{false, true} {
			gh.ResetCounts()
			start := time.Now()
			resp, err := env.in.Update(context.Background(), UpdateRequest{All: true}, Request{Offline: offline}, Approval{DryRun: true})
			if err != nil || resp.Status != StatusUpToDate {
				b.Fatalf("re-plan: %v %+v", err, resp)
			}
			name := "warm"
			if offline {
				name = "offline"
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "ms/"+name)
			b.ReportMetric(float64(gh.Counts().Total), "requests/"+name)
		}
	}
}
