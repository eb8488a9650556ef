package fakegithub

import (
	"net/http"
	"strings"
)

// Counts is a snapshot of request counters. Every request is counted once,
// when it arrives, whatever its outcome (an injected fault, a 404, a 304):
// "how many requests did the client make" is what tests assert on.
type Counts struct {
	InfoRefs   int // GET …/info/refs (git ref advertisement)
	UploadPack int // POST …/git-upload-pack (git content fetch)
	// CommitReads are the upload-packs that ask for a commit and its root
	// tree alone (filter tree:1): what proves an archive, not content.
	// They are not in UploadPack.
	CommitReads   int
	APIRepo       int // GET /repos/{o}/{r}
	APICommits    int // GET /repos/{o}/{r}/commits/{ref}, every outcome
	APICommits304 int // the subset of APICommits answered 304 Not Modified
	APIRefs       int // GET /repos/{o}/{r}/branches and /tags
	APICompare    int // GET /repos/{o}/{r}/compare/{base}...{head}
	APITarball    int // GET /repos/{o}/{r}/tarball[/{ref}] (the redirect)
	APIContents   int // GET /repos/{o}/{r}/contents/{path}
	APITrees      int // GET /repos/{o}/{r}/git/trees/{sha}
	APIGitCommits int // GET /repos/{o}/{r}/git/commits/{sha}
	Archive       int // GET of the archive the redirect points to
	Other         int // anything else (404s, receive-pack, unknown API routes, API and archives in plain-git mode)
	Total         int // every request, counted once (APICommits304 is not added again)
	// With WithAPIBudget: REST requests answered 403 because the budget
	// was spent, and REST requests (whatever their answer) that arrived
	// after the first such answer. Both are also counted above.
	APILimited      int
	APIAfterLimited int
}

// Git is the number of git smart-HTTP requests.
func (c Counts) Git() int { return c.InfoRefs + c.UploadPack + c.CommitReads }

// Content is the number of content fetches: upload-packs and archive downloads.
func (c Counts) Content() int { return c.UploadPack + c.Archive }

// API is the number of REST requests the fake recognised.
func (c Counts) API() int {
	return c.APIRepo + c.APICommits + c.APIRefs + c.APICompare + c.APITarball + c.APIContents + c.APITrees + c.APIGitCommits
}

type counter int

const (
	cOther counter = iota
	cInfoRefs
	cUploadPack
	cAPIRepo
	cAPICommits
	cAPICommits304
	cAPIRefs
	cAPICompare
	cAPITarball
	cArchive
	cAPIContents
	cAPITrees
	cAPIGitCommits
)

func (c *Counts) add(which counter) {
	switch which {
	case cInfoRefs:
		c.InfoRefs++
	case cUploadPack:
		c.UploadPack++
	case cAPIRepo:
		c.APIRepo++
	case cAPICommits:
		c.APICommits++
	case cAPICommits304:
		c.APICommits304++
		return // already in Total as an APICommits request
	case cAPIRefs:
		c.APIRefs++
	case cAPICompare:
		c.APICompare++
	case cAPITarball:
		c.APITarball++
	case cArchive:
		c.Archive++
	case cAPIContents:
		c.APIContents++
	case cAPITrees:
		c.APITrees++
	case cAPIGitCommits:
		c.APIGitCommits++
	default:
		c.Other++
	}
	c.Total++
}

func (s *Server) count(req request, which counter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bump(req, func(c *Counts) { c.add(which) })
}

// commitRead moves an upload-pack, counted as one when it arrived, to
// CommitReads once its body shows it asks for a commit and its root tree
// alone.
func (s *Server) commitRead(req request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bump(req, func(c *Counts) { c.UploadPack--; c.CommitReads++ })
}

// bump applies f to the server-wide counters and to those of the
// repository req names. The caller holds s.mu.
func (s *Server) bump(req request, f func(*Counts)) {
	f(&s.counts)
	if req.repo == "" {
		return
	}
	key := pathKey(req.repo)
	rc := s.repoCounts[key]
	if rc == nil {
		rc = &Counts{}
		s.repoCounts[key] = rc
	}
	f(rc)
}

// Counts returns a snapshot of the server-wide counters.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// RepoCounts returns a snapshot of the counters of requests naming
// owner/name (case-insensitive), whether or not that repository exists.
func (s *Server) RepoCounts(owner, name string) Counts { return s.RepoCountsAt(owner + "/" + name) }

// RepoCountsAt is RepoCounts for a repository path of any depth, as plain-git
// servers have ("group/sub/tools"); it is the same counter as RepoCounts for
// "owner/name".
func (s *Server) RepoCountsAt(path string) Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rc := s.repoCounts[pathKey(path)]; rc != nil {
		return *rc
	}
	return Counts{}
}

// ResetCounts zeroes every counter.
func (s *Server) ResetCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = Counts{}
	s.repoCounts = map[string]*Counts{}
	s.limitedSeen = false
}

// request is what the router learned from a request's path.
type request struct {
	kind    Route // RouteGit, RouteAPI, RouteArchive or "" (other)
	counter counter
	repo    string // repository path as the client spelled it ("owner/name"), without ".git"; "" when none
	tail    string // git: "info/refs" etc.; API: escaped path after /repos/{o}/{r}; archive: file name
}

func (q request) routeName() string {
	if q.kind == "" {
		return "other"
	}
	return string(q.kind)
}

const apiPrefix = "/api/v3"

// classify routes by the escaped path, so a ref such as release%2Fv2 in an
// API path is still one segment until the handler decodes it.
func (s *Server) classify(r *http.Request) request {
	p := r.URL.EscapedPath()
	if s.plain {
		return classifyPlainGit(p)
	}
	switch {
	case p == apiPrefix || strings.HasPrefix(p, apiPrefix+"/"):
		return classifyAPI(strings.TrimPrefix(p, apiPrefix))
	case strings.HasPrefix(p, "/_archive/"):
		parts := strings.Split(strings.TrimPrefix(p, "/_archive/"), "/")
		if len(parts) == 3 && validOwner(parts[0]) && validName(parts[1]) {
			return request{kind: RouteArchive, counter: cArchive, repo: parts[0] + "/" + parts[1], tail: parts[2]}
		}
		return request{kind: RouteArchive, counter: cOther}
	}
	return classifyGit(p)
}

func classifyAPI(p string) request {
	q := request{kind: RouteAPI, counter: cOther}
	if !strings.HasPrefix(p, "/repos/") {
		return q
	}
	parts := strings.SplitN(strings.TrimPrefix(p, "/repos/"), "/", 3)
	if len(parts) < 2 || !validOwner(parts[0]) || !validName(parts[1]) {
		return q
	}
	q.repo = parts[0] + "/" + parts[1]
	if len(parts) == 3 {
		q.tail = "/" + parts[2]
	}
	switch t := q.tail; {
	case t == "" || t == "/":
		q.counter = cAPIRepo
	case strings.HasPrefix(t, "/commits/") && len(t) > len("/commits/"):
		q.counter = cAPICommits
	case t == "/branches" || t == "/tags":
		q.counter = cAPIRefs
	case strings.HasPrefix(t, "/compare/") && len(t) > len("/compare/"):
		q.counter = cAPICompare
	case t == "/tarball" || strings.HasPrefix(t, "/tarball/"):
		q.counter = cAPITarball
	case strings.HasPrefix(t, "/contents/") && len(t) > len("/contents/"):
		q.counter = cAPIContents
	case strings.HasPrefix(t, "/git/trees/") && len(t) > len("/git/trees/"):
		q.counter = cAPITrees
	case strings.HasPrefix(t, "/git/commits/") && len(t) > len("/git/commits/"):
		q.counter = cAPIGitCommits
	}
	return q
}

// classifyGit recognises /{owner}/{repo}[.git]/{info/refs|git-upload-pack|git-receive-pack}.
func classifyGit(p string) request {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) < 3 || !validOwner(parts[0]) {
		return request{}
	}
	name := strings.TrimSuffix(parts[1], ".git")
	if !validName(name) {
		return request{}
	}
	q := request{kind: RouteGit, repo: parts[0] + "/" + name, tail: strings.Join(parts[2:], "/")}
	if q.counter = gitCounter(q.tail); q.counter == cNone {
		return request{}
	}
	return q
}

// cNone marks a tail that is not a git smart-HTTP endpoint.
const cNone counter = -1

func gitCounter(tail string) counter {
	switch tail {
	case "info/refs":
		return cInfoRefs
	case "git-upload-pack":
		return cUploadPack
	case "git-receive-pack":
		return cOther
	}
	return cNone
}

// validOwner and validName follow GitHub's character sets, which also keeps
// them safe as path components of the repository directory.
func validOwner(s string) bool {
	if s == "" || len(s) > 39 {
		return false
	}
	for _, c := range s {
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
