package mirror

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
)

// A /v1 request's parameters are all read, and every one of them checked,
// here, before anything is looked up, fetched or audited as canonical: a
// value that is not text (invalid UTF-8, NUL, control characters), too
// long for the database's keys or outside its grammar is a 400 naming the
// parameter. The audit entry starts with what the client sent (meta.Audit
// stores any bytes), and holds the canonical values once they are checked.

// takes says which parameters a route reads; any other is ignored, and not
// audited, since it changes nothing in the answer.
type takes struct {
	ref   bool // resolve: the ref ("" or HEAD: the default branch)
	sha   bool // a 40-hex commit id, required
	hint  bool // reachable: a ref to look on first
	paths int  // how many "path" values: 0, 1 (marketplace) or maxPaths (snapshot)
}

var routeTakes = map[string]takes{
	"refs":        {},
	"resolve":     {ref: true},
	"reachable":   {sha: true, hint: true},
	"snapshot":    {sha: true, paths: maxPaths},
	"marketplace": {sha: true, paths: 1},
}

// query is a /v1 request's checked parameters.
type query struct {
	src   source.Source
	ref   string // "" is the default branch
	sha   string
	hint  string // "" when absent or not a valid ref: only a hint
	paths []string
}

// readQuery checks the parameters of action's request, filling e with what
// the client sent and then, as each is checked, its canonical value.
func readQuery(v url.Values, action string, e *meta.Entry) (query, error) {
	t := routeTakes[action]
	var q query
	one := func(name string) (string, error) {
		if len(v[name]) > 1 {
			return "", badRequest("%s is given %d times; give it once", name, len(v[name]))
		}
		val := v.Get(name)
		return val, checkText(name, val)
	}

	// Credentials in a refused URL are masked in the audit log too.
	e.Repo = secrets.Mask(v.Get("repo"))
	raw, err := one("repo")
	if err != nil {
		return q, err
	}
	if q.src, err = parseRepo(raw); err != nil {
		return q, err
	}
	e.Repo = q.src.Key()

	if t.ref {
		e.Ref = v.Get("ref")
		if q.ref, err = one("ref"); err != nil {
			return q, err
		}
		if q.ref == host.HeadRef {
			q.ref = ""
		}
		if err := source.CheckRef(q.ref); q.ref != "" && err != nil {
			return q, badRequest("ref %q %v", q.ref, err)
		}
	}
	if t.sha {
		e.SHA = v.Get("sha")
		if q.sha, err = one("sha"); err != nil {
			return q, err
		}
		if !source.IsSHA(q.sha) {
			return q, badRequest("sha %q is not a 40-hex lower-case commit id", q.sha)
		}
	}
	if t.hint {
		// Only a hint: one that is not a ref is dropped, not refused.
		if h, err := one("hint"); err == nil && h != "" && source.CheckRef(h) == nil {
			q.hint = h
		}
	}
	if t.paths > 0 {
		e.Paths = strings.Join(v["path"], "\n")
		if len(v["path"]) > t.paths {
			return q, badRequest("%d paths: at most %d per request", len(v["path"]), t.paths)
		}
		if q.paths, err = checkPaths(v["path"]); err != nil {
			return q, err
		}
		e.Paths = meta.PathsKey(q.paths)
	}
	return q, nil
}

// checkText refuses a parameter that is not text or too long to be a key.
func checkText(name, val string) error {
	if len(val) > meta.MaxKey {
		return badRequest("%s is %d bytes long; at most %d", name, len(val), meta.MaxKey)
	}
	if !utf8.ValidString(val) {
		return badRequest("%s %q is not UTF-8 text", name, val)
	}
	if strings.IndexFunc(val, unicode.IsControl) >= 0 {
		return badRequest("%s %q contains a control character", name, val)
	}
	return nil
}

// parseRepo reads a repository URL with the source grammar's checks.
func parseRepo(raw string) (source.Source, error) {
	if raw == "" {
		return source.Source{}, badRequest("repo is required (the repository's https URL)")
	}
	src, err := source.ParseRepoURL(raw, false)
	if err != nil {
		return source.Source{}, badRequest("repo: %v", err)
	}
	if !src.IsRemote() || src.Ref != "" || src.Subdir != "" {
		return source.Source{}, badRequest("repo %q is not a repository URL", secrets.Mask(raw))
	}
	return src, nil
}

// checkPaths validates the requested folders: each is text, no longer
// than a key, and a clean relative path ("" or "." is the whole tree).
func checkPaths(raw []string) ([]string, error) {
	out := make([]string, 0, len(raw))
	for _, p := range raw {
		if err := checkText("path", p); err != nil {
			return nil, err
		}
		if p == "" || p == "." {
			out = append(out, "")
			continue
		}
		clean, err := plugind.LocalPath(p)
		if err != nil || clean != p {
			return nil, badRequest("path %q is not a clean relative folder path", p)
		}
		out = append(out, clean)
	}
	return out, nil
}
