package resolver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/internal/sshd"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/store"
)

// TestMarketplaceOverSSH: a marketplace on a real sshd (named
// git.example.test, reached through an ssh:// rewrite), installed by its
// scp-like spelling, whose entries are an SSH "url" entry pinned to a SHA
// and an SSH "git-subdir" entry; every candidate resolves, and the
// recorded sources are the canonical ssh:// URLs with "#<sha>", their
// folders beside them.
func TestMarketplaceOverSSH(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	toolsSHA := srv.Repo(t, "tools", merge(prefixed("a", pluginTree("a")), prefixed("b", pluginTree("b"))))
	monoSHA := srv.Repo(t, "mono", prefixed("plugins/gs", pluginTree("gs")))
	doc := `{"name":"team","owner":{"name":"o"},"plugins":[
		{"name":"rel","source":"./plugins/rel"},
		{"name":"a","source":{"source":"url","url":"git@git.example.test:` + srv.Path("tools") + `","path":"a","sha":"` + toolsSHA + `"}},
		{"name":"gs","source":{"source":"git-subdir","url":"ssh://git@git.example.test` + srv.Path("mono") + `","path":"plugins/gs"}}
	]}`
	srv.Repo(t, "market", merge(map[string]string{".claude-plugin/marketplace.json": doc}, prefixed("plugins/rel", pluginTree("rel"))))

	rw, err := host.ParseRewrite("ssh://git@git.example.test/=ssh://" + srv.User + "@" + srv.Addr() + "/ https://=http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "store"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := cache.OpenWith(context.Background(), filepath.Join(dir, "cache.db"), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	hosts, err := NewHosts(HostConfig{
		GitHubURL: "http://127.0.0.1:1", APIURL: "http://127.0.0.1:1", Rewrite: rw,
		Home: srv.Home(t, srv.KnownHostsLine()), Net: host.NetConfig{Timeout: 20 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := New(Config{Store: st, Cache: db, Hosts: hosts})
	src, err := source.Parse("git@git.example.test:" + srv.Path("market"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := res.Resolve(context.Background(), Request{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Candidate{}
	for _, c := range f.Candidates {
		byName[c.Name] = c
	}
	for _, n := range []string{"rel", "a", "gs"} {
		if c := byName[n]; c.Err != nil || c.Digest == "" || !source.IsSHA(c.Commit) {
			t.Errorf("%s: %+v", n, c)
		}
	}
	want := map[string]string{
		"a":  "ssh://git@git.example.test" + srv.Path("tools") + "#" + toolsSHA,
		"gs": "ssh://git@git.example.test" + srv.Path("mono") + "#" + monoSHA,
	}
	for n, w := range want {
		if c := byName[n]; c.Source.String() != w || !strings.HasSuffix(w, c.Commit) {
			t.Errorf("recorded source of %s: %q (commit %s), want %q", n, c.Source, c.Commit, w)
		}
	}
	if c := byName["gs"]; c.Subdir != "plugins/gs" {
		t.Errorf("gs subdir %q", c.Subdir)
	}
}
