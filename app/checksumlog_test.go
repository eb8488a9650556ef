package app

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/fakelog"
)

// BenchmarkColdInstallChecksumLog installs the 300-entry marketplace over
// 50 plugin repositories (and its own) of SPEC §14 cold, in a fresh home
// each time, without a checksum log and with one (REASONIX_CHECKSUM_LOG,
// wired by Open as the CLI has it), alternating, and reports the medians
// and their ratio: the log's lookups run beside the fetches, so it should
// stay within 1.1x (issue 27). Then a warm re-plan of each, which sends
// the log nothing.
//
//	go test -run '^$' -bench ColdInstallChecksumLog -benchtime 5x ./app
func BenchmarkColdInstallChecksumLog(b *testing.B) {
	gh := fakegithub.New(b)
	m, err := bulkmarket.Build(gh, bulkmarket.Shape{Entries: 300, Repos: 50})
	if err != nil {
		b.Fatal(err)
	}
	log := fakelog.New(b, "log.bench", fakelog.FromFakeGitHub(gh))
	src := mustSource(m.Source)
	open := func(b *testing.B, home string, withLog bool) *App {
		env := map[string]string{
			"REASONIX_HOME":           home,
			"REASONIX_GITHUB_URL":     gh.URL,
			"REASONIX_GITHUB_API_URL": gh.APIURL,
			"REASONIX_URL_REWRITE":    "https://=http://127.0.0.1:1/",
		}
		if withLog {
			env["REASONIX_CHECKSUM_LOG"] = log.Env()
		}
		a, err := Open(context.Background(), OpenOptions{Getenv: getenv(env)})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	homes := map[bool]string{}
	root := b.TempDir() // the sub-benchmarks' own go when they end
	n := 0
	install := func(b *testing.B, withLog bool) time.Duration {
		n++
		homes[withLog] = filepath.Join(root, fmt.Sprint("home", n))
		a := open(b, homes[withLog], withLog)
		defer a.Close()
		start := time.Now()
		resp, err := a.Installer.Install(context.Background(), installer.Request{Source: src}, installer.Approval{Yes: true})
		took := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		installed := 0
		for _, a := range resp.Actions {
			if a.Status == installer.ActionInstalled {
				installed++
			}
		}
		if !resp.Applied || installed != 300 {
			b.Fatalf("installed %d plugins (applied %v), want 300", installed, resp.Applied)
		}
		return took
	}
	// The log learns the records once, as the first client's install
	// teaches it; then installs with and without it alternate, so the
	// machine's drift weighs on both alike.
	install(b, true)
	b.Run("cold", func(b *testing.B) {
		log.Reset()
		var without, with []time.Duration
		for i := 0; i < b.N; i++ {
			without = append(without, install(b, false))
			with = append(with, install(b, true))
		}
		mw, ml := median(without), median(with)
		b.ReportMetric(mw.Seconds(), "s/install-without-log")
		b.ReportMetric(ml.Seconds(), "s/install-with-log")
		b.ReportMetric(ml.Seconds()/mw.Seconds(), "ratio")
		b.ReportMetric(float64(log.Lookups())/float64(b.N), "lookups/install")
		b.ReportMetric(float64(log.Requests())/float64(b.N), "log-requests/install")
	})
	// A warm re-plan of what is installed (a process each, as the CLI's):
	// the log's records are read back from the home, with no request.
	for _, withLog := range []bool{false, true} {
		name := "without-log"
		if withLog {
			name = "with-log"
		}
		b.Run("warm/"+name, func(b *testing.B) {
			log.Reset()
			for i := 0; i < b.N; i++ {
				a := open(b, homes[withLog], withLog)
				_, err := a.Installer.Install(context.Background(), installer.Request{Source: src, Replace: true}, installer.Approval{DryRun: true})
				a.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			if n := log.Requests(); n != 0 {
				b.Fatalf("warm re-plans sent %d requests to the log", n)
			}
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
