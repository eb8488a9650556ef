package marketplace

import (
	"cmp"
	"fmt"
	"path"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
)

type node = jsondoc.Node

// entryState is an entry under classification. problem is kept apart from
// the entry label so the duplicate pass can combine problems.
type entryState struct {
	Entry
	idx     int
	problem string
	// claude: the status comes from the document's rules (what validate
	// reports), not from Reasonix's own reading of the entry.
	claude bool
}

var statusRank = map[Status]int{StatusReady: 0, StatusSkipped: 1, StatusError: 2}

// set records a classification. A worse status replaces a milder one; among
// equals the first problem found stands, since it is usually the cause.
// Problems quote the entry's source strings, which may carry credentials
// (https://user:token@…, ?access_token=…): they are masked here, once for
// every reason, warning and error built from an entry.
func (s *entryState) set(st Status, code plugind.Code, format string, args ...any) {
	if s.Status != "" && statusRank[st] <= statusRank[s.Status] {
		return
	}
	s.Status, s.Code, s.problem = st, code, secrets.Mask(fmt.Sprintf(format, args...))
	s.claude = false
}

func (s *entryState) fail(format string, args ...any) {
	s.set(StatusError, plugind.CodeInvalidSource, format, args...)
}

func (s *entryState) skip(code plugind.Code, format string, args ...any) {
	s.set(StatusSkipped, code, format, args...)
}

func (s *entryState) finish() Entry {
	e := s.Entry
	e.Status = cmp.Or(e.Status, StatusReady)
	if e.Status != StatusReady {
		e.Reason = entryLabel(s.idx, s.Name) + ": " + s.problem
		// Unpinned means "ready only because of AllowUnpinned"; an entry
		// refused for another reason (strict: false, a duplicate name) is
		// not ready at all.
		e.Unpinned = false
	} else {
		e.Code = ""
	}
	return e
}

// entry classifies plugins[i] as install reads it.
func (p *parser) entry(i int, obj *node) entryState {
	s := entryState{idx: i}
	s.Kind = KindUnknown
	if obj.Kind != jsondoc.Object {
		s.fail("expected an object with \"name\" and \"source\", found %s", describe(obj))
		return s
	}
	switch nameNode := obj.Get("name"); {
	case nameNode == nil:
		s.fail("has no \"name\"")
	case nameNode.Kind != jsondoc.String:
		s.fail("\"name\" must be a string, found %s", describe(nameNode))
	default:
		s.Name = nameNode.Str
		if err := plugind.ValidateName(s.Name); err != nil {
			s.fail("%v", err)
		}
	}
	s.Manifest = manifest.EntryFields(obj)
	s.Version = obj.GetStr("version")
	s.Description = obj.GetStr("description")
	if !p.f.codex {
		p.strict(&s, obj.Get("strict"))
	} else {
		p.policy(&s, obj.Get("policy"))
	}

	switch src := obj.Get("source"); {
	case src == nil:
		s.fail("has no \"source\"")
	case src.Kind == jsondoc.String:
		p.stringSource(&s, src.Str)
	case src.Kind == jsondoc.Object:
		p.objectSource(&s, src)
	default:
		s.fail("\"source\" must be a path string or an object, found %s", describe(src))
	}
	return s
}

func (p *parser) strict(s *entryState, n *node) {
	switch {
	case n == nil || n.Kind == jsondoc.Null:
	case n.Kind == jsondoc.Bool:
		b := n.Bool
		s.Strict = &b
	default:
		// A mistyped strict ("false") may mean false; guessing true could
		// install a plugin without its manifest, so the entry is refused.
		s.fail("\"strict\" must be true or false, found %s", describe(n))
	}
}

// policy honours Codex's policy.installation: a NOT_AVAILABLE plugin is
// listed but not installable. (A policy of the wrong shape is the table's
// to warn about.)
func (p *parser) policy(s *entryState, n *node) {
	if n.GetStr("installation") == "NOT_AVAILABLE" {
		s.skip(plugind.CodeInvalidSource, "policy.installation is NOT_AVAILABLE: the marketplace does not offer this plugin for installation")
	}
}

// stringSource classifies a string source: a path inside the marketplace,
// or an external reference (URL, "github:o/r", git@…), which carries no pin.
func (p *parser) stringSource(s *entryState, src string) {
	if src == "" {
		s.fail("\"source\" is an empty string")
		return
	}
	if isExternal(src) {
		s.Kind = KindExternal
		s.skip(plugind.CodeNotPinnable, "source %q is an unpinned external reference; only paths inside the marketplace and pinned objects such as {\"source\":\"url\",\"url\":\"https://github.com/OWNER/REPO\",\"sha\":\"<40-hex commit>\"} are installed", src)
		return
	}
	s.Kind = KindRelative
	p.relative(s, "source", src)
	s.AtRoot = s.Path == "." && !p.f.codex
}

// relative places a path inside the marketplace. "./x" and "." are taken
// from the marketplace root; a bare "x" is under metadata.pluginRoot, as
// Claude Code resolves it.
func (p *parser) relative(s *entryState, field, src string) {
	clean, err := cleanPath(field, src)
	if err != nil {
		s.fail("%v; a plugin source must stay inside the marketplace", err)
		return
	}
	bare := src != "." && !strings.HasPrefix(src, "./")
	if bare && p.hasRoot {
		if p.rootErr != "" {
			s.fail("%s %q is relative to metadata.pluginRoot, which is unusable: %s", field, src, p.rootErr)
			return
		}
		clean = cmp.Or(path.Join(p.m.PluginRoot, clean), ".")
	}
	s.Path = clean
}

func (p *parser) objectSource(s *entryState, o *node) {
	typNode := o.Get("source")
	if typNode == nil {
		s.fail("the \"source\" object has no \"source\" type field (expected one of \"url\", \"github\", \"git-subdir\")")
		return
	}
	if typNode.Kind != jsondoc.String {
		s.fail("source.source must be a string naming the source type, found %s", describe(typNode))
		return
	}
	switch typ := typNode.Str; typ {
	case "url":
		s.Kind = KindURL
		p.urlSource(s, o, "url")
	case "github":
		s.Kind = KindGitHub
		p.githubSource(s, o)
	case "git-subdir":
		s.Kind = KindGitSubdir
		p.urlSource(s, o, "git-subdir")
	case "local":
		if !p.f.codex {
			s.skip(plugind.CodeNotPinnable, "source type \"local\" is Codex's; a Claude marketplace names a local plugin with a path string such as \"./plugins/NAME\"")
			return
		}
		s.Kind = KindRelative
		pathStr, present, ok := field(s, o, "path")
		switch {
		case !ok:
		case !present:
			s.fail("the \"local\" source has no \"path\"")
		default:
			p.relative(s, "source.path", pathStr)
		}
	case string(KindNPM), string(KindPip):
		s.Kind = Kind(typ)
		s.skip(plugind.CodeNotPinnable, "%s sources are not supported (nothing from a package registry can be pinned to a commit)", typ)
	default:
		s.skip(plugind.CodeNotPinnable, "source type %q is not supported (supported: relative paths, \"url\", \"github\", \"git-subdir\")", typ)
	}
}

// urlSource reads a source of type typ "url" or "git-subdir". A well-formed
// git-subdir entry is ready whatever its pin: the resolver pins it to a SHA
// at plan time (sha, else ref, else the default branch).
func (p *parser) urlSource(s *entryState, o *node, typ string) {
	gitSubdir := typ == "git-subdir"
	u, ok := requiredString(s, o, "url", fmt.Sprintf("the %q source has no \"url\"", typ))
	if !ok {
		return
	}
	if !gitSubdir && !source.LooksLikeRepoURL(u) {
		// Not a URL at all ("./", a bare name): nothing this product can
		// fetch, so skipped like other kinds it does not support.
		s.skip(plugind.CodeNotPinnable, "source.url %q is not a repository URL (https://HOST/PATH)", secrets.Mask(u))
		return
	}
	r, err := source.ParseRepoURL(u, gitSubdir)
	if err != nil {
		s.fail("source.url: %v", err)
		return
	}
	s.Remote = r
	if !gitSubdir {
		p.pin(s, o, "url", false)
	} else if subdir(s, o, fmt.Sprintf("the \"git-subdir\" source has no \"path\" (the plugin's subdirectory in %s)", s.Remote.Key())) {
		p.readPin(s, o)
	}
}

func (p *parser) githubSource(s *entryState, o *node) {
	repo, ok := requiredString(s, o, "repo", "the \"github\" source has no \"repo\" (OWNER/REPO)")
	if !ok {
		return
	}
	if strings.Count(repo, "/") != 1 {
		s.fail("source.repo %q must be OWNER/REPO", secrets.Mask(repo))
		return
	}
	r, err := source.GitHubRepo(repo)
	if err != nil {
		s.fail("source.repo %q is not a valid GitHub OWNER/REPO: %v", secrets.Mask(repo), err)
		return
	}
	s.Remote = r
	p.pin(s, o, "github", o.Get("commit") != nil)
}

// pin reads sha, ref and path of a url/github source and decides whether
// it is pinned. The older official marketplaces spell the pin "commit"; it
// is not Claude's field, so it stays an unknown field (warned) and the entry
// counts as unpinned, with the reason saying how to fix it.
func (p *parser) pin(s *entryState, o *node, typ string, hasCommit bool) {
	if !p.readPin(s, o) || !subdir(s, o, "") {
		return
	}
	if s.SHA != "" {
		return
	}
	if p.opts.AllowUnpinned {
		s.Unpinned = true
		return
	}
	note := ""
	if hasCommit {
		note = " (its non-standard \"commit\" key is not read; rename it to \"sha\")"
	}
	s.skip(plugind.CodeNotPinnable, "the %q source for %s has no \"sha\" pin%s, so it would follow a moving branch; add a 40-hex \"sha\", or install with --allow-unpinned to pin the ref's current head at plan time", typ, s.Remote.Key(), note)
}

// readPin validates and stores sha and ref; false when the entry failed.
func (p *parser) readPin(s *entryState, o *node) bool {
	sha, hasSHA, ok := field(s, o, "sha")
	switch {
	case !ok:
		return false
	case hasSHA && !source.IsSHA(sha):
		s.fail("source.sha %q is not a full 40-character lowercase hex commit SHA", secrets.Mask(sha))
		return false
	}
	s.SHA = sha
	ref, hasRef, ok := field(s, o, "ref")
	if !ok {
		return false
	}
	if hasRef {
		if err := checkRef(ref); err != nil {
			s.fail("source.ref %q %v", ref, err)
			return false
		}
	}
	s.Ref = ref
	return true
}

// subdir reads a source's "path", the plugin's folder in its repository
// (required when missing, the message for its absence, is not ""); false
// when the entry failed.
func subdir(s *entryState, o *node, missing string) bool {
	sub, present, ok := field(s, o, "path")
	switch {
	case !ok:
		return false
	case !present && missing != "":
		s.fail("%s", missing)
		return false
	case !present:
		return true
	}
	clean, err := cleanPath("source.path", sub)
	if err != nil {
		s.fail("%v; the plugin's subdirectory must stay inside the repository", err)
		return false
	}
	if clean != "." {
		s.Path = clean
	}
	return true
}

// requiredString reads a string field that must be present and non-empty,
// failing the entry with missing (or the type error) when it is not.
func requiredString(s *entryState, o *node, key, missing string) (string, bool) {
	v, _, ok := field(s, o, key)
	if ok && v == "" {
		s.fail("%s", missing)
	}
	return v, ok && v != ""
}

// field reads an optional string field of a source object (null counts as
// absent); one of another type fails the entry, and ok is false.
func field(s *entryState, o *node, key string) (v string, present, ok bool) {
	n := o.Get(key)
	switch {
	case n == nil || n.Kind == jsondoc.Null:
		return "", false, true
	case n.Kind != jsondoc.String:
		s.fail("source.%s must be a string, found %s", key, describe(n))
		return "", false, false
	}
	return n.Str, true, true
}

// describe names a value's type for a reason: "a number", "an array"
// (and "a string", not quoting it as Node.Describe does).
func describe(n *node) string {
	if n.Kind == jsondoc.String {
		return "a string"
	}
	return n.Describe()
}
