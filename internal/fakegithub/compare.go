package fakegithub

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

type compareJSON struct {
	URL             string        `json:"url"`
	HTMLURL         string        `json:"html_url"`
	PermalinkURL    string        `json:"permalink_url"`
	DiffURL         string        `json:"diff_url"`
	PatchURL        string        `json:"patch_url"`
	BaseCommit      *commitJSON   `json:"base_commit"`
	MergeBaseCommit *commitJSON   `json:"merge_base_commit"`
	Status          string        `json:"status"`
	AheadBy         int           `json:"ahead_by"`
	BehindBy        int           `json:"behind_by"`
	TotalCommits    int           `json:"total_commits"`
	Commits         []*commitJSON `json:"commits"`
	Files           []struct{}    `json:"files"`
}

// compareMaxPerPage is GitHub's default and largest page of compared
// commits.
const compareMaxPerPage = 250

// apiCompare serves compare/{base}...{head}, computed by git: status is
// "identical" (same commit), "ahead" (head descends from base), "behind"
// (head is an ancestor of base) or "diverged"; ahead_by and total_commits
// count base..head, behind_by head..base. Either side may be a branch, tag
// or SHA, reachable or not, as on GitHub. An unknown side is 404 Not Found;
// histories with no common ancestor are 404 too, as GitHub answers.
// commits lists base..head oldest first, paginated like GitHub.
func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request, repo *Repo, spec string) {
	baseEsc, headEsc, ok := strings.Cut(spec, "...")
	base, okBase := unescapeRef(baseEsc)
	head, okHead := unescapeRef(headEsc)
	if !ok || !okBase || !okHead || base == "" || head == "" {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	ctx := r.Context()
	var shas [2]string
	for i, ref := range []string{base, head} {
		sha, err := repo.resolve(ctx, ref)
		if errors.Is(err, errNoRef) {
			writeAPIError(w, http.StatusNotFound, "Not Found")
			return
		}
		if err != nil {
			writeAPIError(w, http.StatusInternalServerError, err.Error())
			return
		}
		shas[i] = sha
	}
	baseSHA, headSHA := shas[0], shas[1]
	mergeBase, err := s.runGit(ctx, repo.gitDir, nil, "merge-base", baseSHA, headSHA)
	var ge *gitError
	if errors.As(err, &ge) && ge.exitCode() == 1 {
		writeAPIError(w, http.StatusNotFound, fmt.Sprintf("No common ancestor between %s and %s.", base, head))
		return
	}
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	counts, err := s.runGit(ctx, repo.gitDir, nil, "rev-list", "--left-right", "--count", baseSHA+"..."+headSHA)
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var behind, ahead int
	if _, err := fmt.Sscanf(string(counts), "%d %d", &behind, &ahead); err != nil {
		writeAPIError(w, http.StatusInternalServerError, fmt.Sprintf("rev-list --count printed %q", counts))
		return
	}
	list, err := s.runGit(ctx, repo.gitDir, nil, "rev-list", "--reverse", baseSHA+".."+headSHA)
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	apiBase := s.repoAPIURL(repo)
	page := paginate(w, r, strings.Fields(string(list)), compareMaxPerPage, compareMaxPerPage,
		apiBase+"/compare/"+baseEsc+"..."+headEsc)
	mb := strings.TrimSpace(string(mergeBase))
	// One git log for every commit shown; it prints each distinct commit
	// once, so the base and merge base join the page only when new.
	want := append([]string{}, page...)
	for _, sha := range []string{baseSHA, mb} {
		if !slices.Contains(want, sha) {
			want = append(want, sha)
		}
	}
	commits, err := s.commitsJSON(ctx, repo, want)
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	bySHA := map[string]*commitJSON{}
	for _, c := range commits {
		bySHA[c.SHA] = c
	}
	html := s.URL + "/" + repo.Owner + "/" + repo.Name + "/compare/" + baseEsc + "..." + headEsc
	out := compareJSON{
		URL:             apiBase + "/compare/" + baseEsc + "..." + headEsc,
		HTMLURL:         html,
		PermalinkURL:    s.URL + "/" + repo.Owner + "/" + repo.Name + "/compare/" + baseSHA[:7] + "..." + headSHA[:7],
		DiffURL:         html + ".diff",
		PatchURL:        html + ".patch",
		BaseCommit:      bySHA[baseSHA],
		MergeBaseCommit: bySHA[mb],
		Status:          compareStatus(ahead, behind),
		AheadBy:         ahead,
		BehindBy:        behind,
		TotalCommits:    ahead,
		Commits:         make([]*commitJSON, 0, len(page)),
		Files:           []struct{}{},
	}
	for _, sha := range page {
		out.Commits = append(out.Commits, bySHA[sha])
	}
	writeJSON(w, http.StatusOK, out)
}

func compareStatus(ahead, behind int) string {
	switch {
	case ahead == 0 && behind == 0:
		return "identical"
	case behind == 0:
		return "ahead"
	case ahead == 0:
		return "behind"
	}
	return "diverged"
}
