package app

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/fakelog"
)

// BenchmarkColdInstallChecksumLog installs the 300-entry marketplace over
// 50 plugin repositories (and its own) of SPEC §14 cold, in a fresh home
// each time, without a checksum log and with one (REASONIX_CHECKSUM_LOG,
// wired by Open as the CLI has it): the log's lookups run beside the
// fetches, so the second should stay within 1.1x of the first (issue 27);
// then a warm re-plan of each, which sends the log nothing.
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
	for _, withLog := range []bool{false, true} {
		name := "without-log"
		if withLog {
			name = "with-log"
		}
		b.Run("cold/"+name, func(b *testing.B) {
			log.Reset()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				n++
				homes[withLog] = filepath.Join(root, fmt.Sprint("home", n))
				a := open(b, homes[withLog], withLog)
				b.StartTimer()
				resp, err := a.Installer.Install(context.Background(), installer.Request{Source: src}, installer.Approval{Yes: true})
				b.StopTimer()
				a.Close()
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
				b.StartTimer()
			}
			b.ReportMetric(float64(log.Lookups())/float64(b.N), "lookups/install")
			b.ReportMetric(float64(log.Requests())/float64(b.N), "log-requests/install")
		})
	}
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
