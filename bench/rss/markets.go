package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
)

// marketCases are the large marketplaces of issue 23, built by
// internal/bulkmarket, each on a fake of its own (bulkmarket builds one
// marketplace per server) and only when one of its cases runs:
//   - a rich one shaped like the 269-entry real marketplace that first went
//     over 64 MiB (long descriptions and keywords, 22 files per plugin,
//     backups, planned skills, docs and catalogs beside them: about 14,000
//     files; relative, github, url and git-subdir entries), planned,
//     installed and added as a known marketplace;
//   - a 1,000-entry one over 200 repositories, the same three ways;
//   - one over eight repositories of 8,000 files with GitHub's REST budget
//     spent, so that everything comes over git, eight packs at once.
func marketCases(work string) []benchCase {
	rich := &lazyMarket{work: work, name: "rich", shape: bulkmarket.Shape{Entries: 269, Repos: 12, Relative: 200, Rich: true}}
	bulk := &lazyMarket{work: work, name: "bulk", shape: bulkmarket.Shape{Entries: 1000, Repos: 200}}
	large := &lazyMarket{work: work, name: "large", shape: bulkmarket.Shape{Entries: 64, Repos: 8, Relative: 8, Rich: true, RepoFiles: 8000},
		opts: []fakegithub.Option{fakegithub.WithAPIBudget(1, time.Hour)}, spend: true}
	var cases []benchCase
	for _, m := range []*lazyMarket{rich, bulk} {
		label := fmt.Sprintf("%d-entry marketplace", m.shape.Entries)
		if m.shape.Rich {
			label = fmt.Sprintf("%d-entry rich marketplace", m.shape.Entries)
		}
		cases = append(cases,
			benchCase{name: label + ": --dry-run", want: "ok", market: m, args: []string{"plugin", "install", "", "--dry-run"}},
			benchCase{name: label + ": --yes", want: "ok", market: m, args: []string{"plugin", "install", "", "--yes"}},
			benchCase{name: label + ": marketplace add", want: "ok", market: m, args: []string{"marketplace", "add", "", "--json"}},
		)
	}
	return append(cases, benchCase{name: "8 large repos, API budget spent: --yes", want: "ok", market: large, gitOnly: true,
		args: []string{"plugin", "install", "", "--yes"}})
}

// lazyMarket is a bulkmarket marketplace on its own fake, built the first
// time a case needs it.
type lazyMarket struct {
	work, name string
	shape      bulkmarket.Shape
	opts       []fakegithub.Option
	spend      bool // spend the fake's REST budget before any case runs

	fake   *fakegithub.Server
	source string
}

func (m *lazyMarket) get() (*fakegithub.Server, string, error) {
	if m.fake != nil {
		return m.fake, m.source, nil
	}
	dir := filepath.Join(m.work, "fake-"+m.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	start := time.Now()
	f, err := fakegithub.Start(dir, m.opts...)
	if err != nil {
		return nil, "", err
	}
	built, err := bulkmarket.Build(f, m.shape)
	if err == nil && m.spend {
		err = spendAPIBudget(f)
	}
	if err != nil {
		f.Close()
		return nil, "", fmt.Errorf("%s marketplace: %w", m.name, err)
	}
	fmt.Fprintf(os.Stderr, "%s marketplace ready in %s\n", m.name, time.Since(start).Round(time.Millisecond))
	m.fake, m.source = f, built.Source
	return f, m.source, nil
}

func (m *lazyMarket) close() {
	if m.fake != nil {
		m.fake.Close()
	}
}

// spendAPIBudget spends f's REST budget as another client would.
func spendAPIBudget(f *fakegithub.Server) error {
	for i := 0; i < 100; i++ {
		resp, err := http.Get(f.APIURL + "/repos/bulk/market")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusForbidden {
			return nil
		}
	}
	return errors.New("the fake's API budget was never spent")
}
