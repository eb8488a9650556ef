package resolver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
)

// TestEntryErrorsNameTheirCause: a marketplace entry that cannot be
// fetched says why — repository not found, commit not found in the
// repository, commit not on any branch or tag, path not found at that
// commit — whichever transport carried it: GitHub over git, GitHub's
// archives alone (REASONIX_GIT=off), a plain git host. The same holds
// warm (remembered) and offline.
func TestEntryErrorsNameTheirCause(t *testing.T) {
	t.Parallel()
	const ghost = "0123456789abcdef0123456789abcdef01234567"
	type entryCase struct {
		name     string
		sentinel error
		says     string
	}
	cases := []entryCase{
		{"missing-repo", host.ErrRepoNotFound, "repository not found"},
		{"missing-commit", host.ErrCommitNotFound, "commit not found in the repository"},
		{"subdir-missing-commit", host.ErrCommitNotFound, "commit not found in the repository"},
		{"unreachable", host.ErrUnreachable, "not on any branch or tag"},
		{"missing-path", host.ErrPathNotFound, "not found"},
		{"unpinned-missing-repo", host.ErrRepoNotFound, "repository not found"},
	}
	// exact: the host says which of "not in the repository" and "on no
	// branch or tag" holds. GitHub's API does; a plain host that serves
	// objects by SHA shows an unreachable commit exists; one that serves
	// only what its refs reach cannot tell a missing commit from an
	// unreachable one, and the error says both.
	transports := []struct {
		name          string
		gitOff        bool
		plain         bool
		serveAnyWants bool
		exactMissing  bool
		exactHidden   bool
	}{
		{name: "github over git", exactMissing: true, exactHidden: true},
		{name: "github archives", gitOff: true, exactMissing: true, exactHidden: true},
		{name: "plain git host", plain: true},
		{name: "plain git host serving any sha", plain: true, serveAnyWants: true, exactHidden: true},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{gitOff: tr.gitOff})
			srv, urlOf := e.gh, func(repo string) string { return "https://github.com/" + repo }
			if tr.plain {
				srv, urlOf = e.plain, func(repo string) string { return "https://git.example.test/" + repo + ".git" }
				srv.ServeUnreachableWants(tr.serveAnyWants)
			}
			tools := create(srv, "acme/tools")
			sha := tools.Commit("main", prefixed("a", pluginTree("a")))
			hidden := tools.CommitUnreachable("", prefixed("a", pluginTree("evil")))
			entry := func(name, typ, url, path, pin string) string {
				src := fmt.Sprintf(`{"source":%q,"url":%q`, typ, url)
				if path != "" {
					src += fmt.Sprintf(`,"path":%q`, path)
				}
				if pin != "" {
					src += fmt.Sprintf(`,"sha":%q`, pin)
				}
				return fmt.Sprintf(`{"name":%q,"source":%s}}`, name, src)
			}
			doc := `{"name":"causes","owner":{"name":"o"},"plugins":[` + strings.Join([]string{
				entry("good", "url", urlOf("acme/tools"), "a", sha),
				entry("missing-repo", "url", urlOf("acme/nowhere"), "a", sha),
				entry("missing-commit", "url", urlOf("acme/tools"), "a", ghost),
				entry("subdir-missing-commit", "git-subdir", urlOf("acme/tools"), "a", ghost),
				entry("unreachable", "url", urlOf("acme/tools"), "a", hidden),
				entry("missing-path", "url", urlOf("acme/tools"), "nope", sha),
				entry("unpinned-missing-repo", "url", urlOf("acme/gone"), "", ""),
			}, ",") + `]}`
			market := create(srv, "acme/market")
			market.Commit("main", map[string]string{".claude-plugin/marketplace.json": doc})
			src := urlOf("acme/market")
			allow := func(r *Request) { r.AllowUnpinned = true }

			check := func(label string, f *Fetched) {
				t.Helper()
				byName := map[string]Candidate{}
				for _, c := range f.Candidates {
					byName[c.Name] = c
				}
				if c := byName["good"]; c.Err != nil || c.Commit != sha {
					t.Errorf("%s: good: %+v", label, c)
				}
				for _, want := range cases {
					c := byName[want.name]
					if c.Err == nil {
						t.Errorf("%s: %s resolved: %+v", label, want.name, c)
						continue
					}
					if !errors.Is(c.Err, want.sentinel) || !strings.Contains(c.Err.Error(), want.says) || plugind.CodeOf(c.Err) != plugind.CodeNotFound {
						t.Errorf("%s: %s: %q (%s), want %v saying %q", label, want.name, c.Err, plugind.CodeOf(c.Err), want.sentinel, want.says)
					}
					exact := map[error]bool{host.ErrCommitNotFound: tr.exactMissing, host.ErrUnreachable: tr.exactHidden}
					for other, ok := range exact {
						if other != want.sentinel && errors.Is(c.Err, other) && exact[want.sentinel] && (want.sentinel == host.ErrCommitNotFound || want.sentinel == host.ErrUnreachable) {
							t.Errorf("%s: %s: %q also claims %v", label, want.name, c.Err, other)
						}
						_ = ok
					}
					if !strings.Contains(c.Err.Error(), want.name) {
						t.Errorf("%s: %s: the error does not name the entry: %q", label, want.name, c.Err)
					}
				}
			}
			f, err := e.resolve(src, allow)
			if err != nil {
				t.Fatal(err)
			}
			check("cold", f)
			e.reset()
			if f, err = e.resolve(src, allow); err != nil {
				t.Fatal(err)
			}
			check("warm", f)
			if f, err = e.resolve(src, allow, offline); err != nil {
				t.Fatal(err)
			}
			check("offline", f)
		})
	}
}

// create makes a repository on either fake host.
func create(srv *fakegithub.Server, path string) *fakegithub.Repo {
	return srv.CreateRepoAt(path)
}
