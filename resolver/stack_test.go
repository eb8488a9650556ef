package resolver

import (
	"net/http"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// TestEveryGitTransportRetries: a git request that fails for a transient
// reason (a 502) is tried again, on GitHub as on a generic host, since
// git's smart HTTP has no retries of its own (Hosts.stack). On GitHub the
// content then still comes over git, with no archive fallback and no
// warning about one.
func TestEveryGitTransportRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		github bool
	}{
		{"github", true},
		{"generic git host", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{})
			srv, src := e.plain, "https://git.example.test/acme/tools.git"
			var repo *fakegithub.Repo
			if tc.github {
				srv, src = e.gh, "git:github.com/acme/tools"
				repo = srv.CreateRepo("acme", "tools")
			} else {
				repo = srv.CreateRepoAt("acme/tools")
			}
			head := repo.Commit("main", pluginTree("tools"))
			srv.Fault(fakegithub.RouteGit, fakegithub.Fault{Status: http.StatusBadGateway, Times: 1})
			f, err := e.resolve(src)
			if err != nil {
				t.Fatalf("a transient git failure was not retried: %v", err)
			}
			if f.Commit != head || f.Transport != "git" || len(f.Warnings) != 0 {
				t.Fatalf("commit %s transport %q warnings %q: want %s over git, no warning", f.Commit, f.Transport, f.Warnings, head)
			}
			if c := srv.Counts(); c.Archive != 0 || c.APITarball != 0 {
				t.Fatalf("the archive was used: %+v", c)
			}
		})
	}
}
