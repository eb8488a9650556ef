package mirror_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
)

// The mirror fetches a private repository with its own GITHUB_TOKEN, read
// from its own environment as a client's would be (app.Upstream), never
// with anything a client sends: the fake GitHub answers only that token,
// and the client, which holds another one, installs through the mirror.
// The mirror's token appears in no answer (bodies and headers, refusals
// and not-founds included), no audit row and no log line.
func TestPrivateUpstreamUsesTheMirrorsToken(t *testing.T) {
	t.Parallel()
	const mirrorGH = "ghp_MirrorOwnToken0123456789abcdefABCDEF"
	const clientGH = "ghp_ClientToken0123456789abcdefABCDEFGHI"
	eng := mirrortest.Open(t)
	// A file takes the replica's concurrent log lines as they come.
	logs, err := os.Create(filepath.Join(t.TempDir(), "mirror.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gh := fakegithub.New(t, fakegithub.WithLogger(logger))
	gh.RequireToken(mirrorGH)
	mirrorEnv := map[string]string{"REASONIX_GITHUB_URL": gh.URL, "REASONIX_GITHUB_API_URL": gh.APIURL,
		"REASONIX_URL_REWRITE": "https://=http://127.0.0.1:1/", "GITHUB_TOKEN": mirrorGH}
	up, err := app.Upstream(func(k string) string { return mirrorEnv[k] }, logger, true)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{gh: gh, eng: eng, rep: eng.StartReplica(t, mirrortest.Options{Upstream: up, Log: logger}), token: eng.Token(t, "laptop")}
	sha := gh.CreateRepo("acme", "private").Commit("main", map[string]string{
		".claude-plugin/plugin.json":      `{"name":"private"}`,
		".claude-plugin/marketplace.json": `{"name":"private","owner":{"name":"acme"},"plugins":[]}`,
		"skills/s/SKILL.md":               "---\ndescription: private\n---\n",
	})

	a, err := mirrortest.OpenClient(context.Background(), filepath.Join(t.TempDir(), "home"), map[string]string{
		"REASONIX_MIRROR": f.rep.URL, "REASONIX_MIRROR_TOKEN": f.token, "REASONIX_MIRROR_ONLY": "1", "GITHUB_TOKEN": clientGH,
	}, gh, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if _, err := a.Installer.Install(context.Background(), installer.Request{Source: mustSource("https://github.com/acme/private")}, installer.Approval{Yes: true}); err != nil {
		t.Fatalf("install a private plugin through the mirror: %v", err)
	}
	if c := gh.RepoCounts("acme", "private"); c.Total == 0 {
		t.Fatal("the mirror did not go upstream")
	}

	// Every route, a not-found and an upstream that refuses: none says
	// the token.
	repo := "repo=" + url.QueryEscape("https://github.com/acme/private")
	var answers []string
	for _, path := range []string{"/v1/refs?" + repo, "/v1/resolve?" + repo, "/v1/reachable?sha=" + sha + "&" + repo,
		"/v1/snapshot?sha=" + sha + "&" + repo, "/v1/marketplace?sha=" + sha + "&" + repo,
		"/v1/resolve?repo=" + url.QueryEscape("https://github.com/acme/nope"), "/v1/snapshot?sha=" + strings.Repeat("a", 40) + "&" + repo,
		"/v1/refs?repo=" + url.QueryEscape("https://git.example.test/acme/private.git")} {
		resp, body := f.get(t, path, f.token)
		answers = append(answers, fmt.Sprintf("%s: %d %v %s", path, resp.StatusCode, resp.Header, body))
	}
	gh.RequireToken("ghp_SomethingElse0123456789abcdefABCDEFGH")
	resp, body := f.get(t, "/v1/resolve?repo="+url.QueryEscape("https://github.com/acme/fresh"), f.token)
	answers = append(answers, fmt.Sprintf("refused upstream: %d %v %s", resp.StatusCode, resp.Header, body))
	if resp.StatusCode == http.StatusOK {
		t.Errorf("an upstream refusing the mirror's token answered 200: %s", body)
	}
	for _, got := range answers {
		if strings.Contains(got, mirrorGH) || strings.Contains(got, clientGH) {
			t.Errorf("an answer carries a GitHub token: %s", got)
		}
	}
	for _, e := range f.auditRows(t) {
		if row := fmt.Sprintf("%+v", e); strings.Contains(row, mirrorGH) || strings.Contains(row, clientGH) {
			t.Errorf("an audit row carries a GitHub token: %s", row)
		}
	}
	logged, err := os.ReadFile(logs.Name())
	if err != nil {
		t.Fatal(err)
	}
	if l := string(logged); strings.Contains(l, mirrorGH) || strings.Contains(l, clientGH) || !strings.Contains(l, "fetched upstream") {
		t.Errorf("the log carries a GitHub token, or logged nothing:\n%s", l)
	}
}
