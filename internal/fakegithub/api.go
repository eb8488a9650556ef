package fakegithub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// serveAPI answers the REST subset the resolver uses, shaped like
// api.github.com so go-github's types decode it.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, req request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	if !s.authorized(r) {
		writeAPIError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if req.counter == cOther {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	repo := s.lookup(req.repo)
	if repo == nil {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	switch req.counter {
	case cAPIRepo:
		s.apiRepo(w, repo)
	case cAPICommits:
		ref, ok := unescapeRef(strings.TrimPrefix(req.tail, "/commits/"))
		if !ok {
			writeAPIError(w, http.StatusNotFound, "Not Found")
			return
		}
		s.apiCommit(w, r, req, repo, ref)
	case cAPIRefs:
		s.apiRefs(w, r, repo, strings.TrimPrefix(req.tail, "/"))
	case cAPICompare:
		s.gitCache.serve(w, r, repo, req.tail+"\x00"+r.Header.Get("Accept"), func(w http.ResponseWriter) {
			s.apiCompare(w, r, repo, strings.TrimPrefix(req.tail, "/compare/"))
		})
	case cAPITarball:
		ref, ok := unescapeRef(strings.TrimPrefix(strings.TrimPrefix(req.tail, "/tarball"), "/"))
		if !ok {
			writeAPIError(w, http.StatusNotFound, "Not Found")
			return
		}
		s.apiTarball(w, r, repo, ref)
	case cAPIContents:
		p, ok := unescapeRef(strings.TrimPrefix(req.tail, "/contents/"))
		if !ok {
			writeAPIError(w, http.StatusNotFound, "Not Found")
			return
		}
		s.apiContents(w, r, repo, p)
	case cAPITrees:
		s.apiGitTree(w, r, repo, strings.TrimPrefix(req.tail, "/git/trees/"))
	case cAPIGitCommits:
		s.apiGitCommit(w, r, repo, strings.TrimPrefix(req.tail, "/git/commits/"))
	}
}

func unescapeRef(escaped string) (string, bool) {
	ref, err := url.PathUnescape(escaped)
	return ref, err == nil
}

type ownerJSON struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type repoJSON struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	FullName      string    `json:"full_name"`
	Owner         ownerJSON `json:"owner"`
	Private       bool      `json:"private"`
	DefaultBranch string    `json:"default_branch"`
	HTMLURL       string    `json:"html_url"`
	CloneURL      string    `json:"clone_url"`
	URL           string    `json:"url"`
}

func (s *Server) apiRepo(w http.ResponseWriter, repo *Repo) {
	writeJSON(w, http.StatusOK, repoJSON{
		ID:            1,
		Name:          repo.Name,
		FullName:      repo.Owner + "/" + repo.Name,
		Owner:         ownerJSON{Login: repo.Owner, Type: "User"},
		DefaultBranch: repo.DefaultBranch(),
		HTMLURL:       s.URL + "/" + repo.Owner + "/" + repo.Name,
		CloneURL:      repo.CloneURL(),
		URL:           s.repoAPIURL(repo),
	})
}

func (s *Server) repoAPIURL(repo *Repo) string {
	return s.APIURL + "/repos/" + repo.Owner + "/" + repo.Name
}

// shaMedia matches application/vnd.github.sha and .VERSION.sha.
var shaMedia = regexp.MustCompile(`^application/vnd\.github(\.[a-z0-9-]+)?\.sha$`)

func wantsSHA(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if shaMedia.MatchString(strings.ToLower(strings.TrimSpace(mt))) {
				return true
			}
		}
	}
	return false
}

// etagMatches implements If-None-Match's weak comparison.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

// apiCommit serves commits/{ref}. The sha media type's ETag is the quoted
// SHA, which is what go-github's GetCommitSHA1(lastSHA) sends back, so an
// unchanged ref costs a bodiless 304.
func (s *Server) apiCommit(w http.ResponseWriter, r *http.Request, req request, repo *Repo, ref string) {
	sha, err := repo.resolve(r.Context(), ref)
	if err != nil {
		s.refError(w, r, repo, ref, err, http.StatusUnprocessableEntity)
		return
	}
	bare := wantsSHA(r)
	etag := `"` + sha + `"`
	if !bare {
		etag = `"` + sha + `-json"`
	}
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Vary", "Accept, Authorization")
	h.Set("Cache-Control", "private, max-age=60, s-maxage=60")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		s.count(req, cAPICommits304)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if bare {
		h.Set("Content-Type", "application/vnd.github.sha; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(sha)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(sha))
		return
	}
	c, err := s.commitJSON(r, repo, sha)
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// refError answers an unresolvable ref: 409 for an empty repository (as
// GitHub does), otherwise notFound.
func (s *Server) refError(w http.ResponseWriter, r *http.Request, repo *Repo, ref string, err error, notFound int) {
	if !errors.Is(err, errNoRef) {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	refs, lerr := repo.refs(r.Context())
	switch {
	case lerr != nil:
		writeAPIError(w, http.StatusInternalServerError, lerr.Error())
	case len(refs) == 0:
		writeAPIError(w, http.StatusConflict, "Git Repository is empty.")
	case notFound == http.StatusUnprocessableEntity:
		writeAPIError(w, notFound, "No commit found for SHA: "+ref)
	default:
		writeAPIError(w, notFound, "Not Found")
	}
}

type personJSON struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

type shaURL struct {
	SHA string `json:"sha"`
	URL string `json:"url,omitempty"`
}

type commitJSON struct {
	SHA     string   `json:"sha"`
	URL     string   `json:"url"`
	HTMLURL string   `json:"html_url"`
	Parents []shaURL `json:"parents"`
	Commit  struct {
		Message   string     `json:"message"`
		Tree      shaURL     `json:"tree"`
		Author    personJSON `json:"author"`
		Committer personJSON `json:"committer"`
	} `json:"commit"`
}

func (s *Server) commitJSON(r *http.Request, repo *Repo, sha string) (*commitJSON, error) {
	cs, err := s.commitsJSON(r.Context(), repo, []string{sha})
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}

// commitFormat prints what commitJSON needs, NUL-separated; the message
// comes last because only it may span lines.
const (
	commitFormat = "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B"
	commitFields = 10
)

// commitsJSON reads distinct commits with one git process, in the given
// order.
func (s *Server) commitsJSON(ctx context.Context, repo *Repo, shas []string) ([]*commitJSON, error) {
	args := append([]string{"log", "--no-walk=unsorted", "-z", commitFormat, "--end-of-options"}, shas...)
	out, err := s.runGit(ctx, repo.gitDir, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("read commits %v: %w", shas, err)
	}
	f := strings.Split(string(out), "\x00")
	if len(f)%commitFields == 1 && f[len(f)-1] == "" { // -z ends the last record too
		f = f[:len(f)-1]
	}
	if len(f) != commitFields*len(shas) {
		return nil, fmt.Errorf("read commits %v: unexpected git log output", shas)
	}
	base := s.repoAPIURL(repo)
	cs := make([]*commitJSON, 0, len(shas))
	for ; len(f) > 0; f = f[commitFields:] {
		sha := f[0]
		c := &commitJSON{SHA: sha, URL: base + "/commits/" + sha,
			HTMLURL: s.URL + "/" + repo.Owner + "/" + repo.Name + "/commit/" + sha, Parents: []shaURL{}}
		for _, p := range strings.Fields(f[2]) {
			c.Parents = append(c.Parents, shaURL{SHA: p, URL: base + "/commits/" + p})
		}
		c.Commit.Tree = shaURL{SHA: f[1], URL: base + "/git/trees/" + f[1]}
		c.Commit.Author = personJSON{Name: f[3], Email: f[4], Date: f[5]}
		c.Commit.Committer = personJSON{Name: f[6], Email: f[7], Date: f[8]}
		c.Commit.Message = strings.TrimRight(f[9], "\n")
		cs = append(cs, c)
	}
	return cs, nil
}

type refJSON struct {
	Name       string `json:"name"`
	Commit     shaURL `json:"commit"`
	Protected  *bool  `json:"protected,omitempty"`
	TarballURL string `json:"tarball_url,omitempty"`
	ZipballURL string `json:"zipball_url,omitempty"`
}

// apiRefs lists branches or tags (kind) sorted by name, paginated like
// GitHub: per_page (default 30, at most 100), page, and a Link header.
func (s *Server) apiRefs(w http.ResponseWriter, r *http.Request, repo *Repo, kind string) {
	refs, err := repo.refs(r.Context())
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	prefix := "refs/heads/"
	if kind == "tags" {
		prefix = "refs/tags/"
	}
	base := s.repoAPIURL(repo)
	items := []refJSON{}
	for _, q := range refs {
		if !strings.HasPrefix(q.name, prefix) {
			continue
		}
		it := refJSON{Name: q.short(), Commit: shaURL{SHA: q.commit, URL: base + "/commits/" + q.commit}}
		if kind == "tags" {
			it.TarballURL = base + "/tarball/refs/tags/" + it.Name
			it.ZipballURL = base + "/zipball/refs/tags/" + it.Name
		} else {
			it.Protected = new(bool)
		}
		items = append(items, it)
	}
	writeJSON(w, http.StatusOK, paginate(w, r, items, 30, 100, base+"/"+kind))
}

// paginate returns the page of items that per_page and page select (per_page
// defaulting to def, at most limit) and sets GitHub's Link header when there
// is more than one page.
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T, def, limit int, base string) []T {
	perPage := min(max(queryInt(r, "per_page", def), 1), limit)
	page := max(queryInt(r, "page", 1), 1)
	last := max((len(items)+perPage-1)/perPage, 1)
	start := min((page-1)*perPage, len(items))
	end := min(start+perPage, len(items))
	if last > 1 {
		w.Header().Set("Link", linkHeader(base, perPage, page, last))
	}
	return items[start:end]
}

func queryInt(r *http.Request, key string, def int) int {
	v, err := strconv.Atoi(r.URL.Query().Get(key))
	if err != nil {
		return def
	}
	return v
}

func linkHeader(base string, perPage, page, last int) string {
	link := func(p int, rel string) string {
		return fmt.Sprintf(`<%s?per_page=%d&page=%d>; rel="%s"`, base, perPage, p, rel)
	}
	var parts []string
	if page > 1 {
		parts = append(parts, link(min(page-1, last), "prev"))
	}
	if page < last {
		parts = append(parts, link(page+1, "next"))
	}
	parts = append(parts, link(last, "last"), link(1, "first"))
	return strings.Join(parts, ", ")
}

// apiTarball redirects to an archive of the resolved commit on this server,
// as api.github.com redirects to codeload. go-github's GetArchiveLink reads
// the Location of this 302 without following it.
func (s *Server) apiTarball(w http.ResponseWriter, r *http.Request, repo *Repo, ref string) {
	sha, err := repo.resolve(r.Context(), ref)
	if err != nil {
		s.refError(w, r, repo, ref, err, http.StatusNotFound)
		return
	}
	w.Header().Set("Location", s.archiveURL(repo, sha))
	w.WriteHeader(http.StatusFound)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeAPIError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{
		"message":           msg,
		"documentation_url": "https://docs.github.com/rest",
	})
}
