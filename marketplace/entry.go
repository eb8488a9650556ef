package marketplace

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/source"
)

// Per-source-type field sets, from the Claude schema. "path" on url and
// github is not in the schema but is what SPEC §7 and the official
// marketplace use for a plugin in a subdirectory.
var sourceFields = map[string]set{
	"url":        newSet("source", "url", "ref", "sha", "path"),
	"github":     newSet("source", "repo", "ref", "sha", "path"),
	"git-subdir": newSet("source", "url", "path", "ref", "sha"),
	"npm":        newSet("source", "package", "version", "registry"),
	"local":      newSet("source", "path"),
}

// entryState is an entry under classification. problem is kept apart from
// the entry label so the duplicate pass can combine problems.
type entryState struct {
	Entry
	idx     int
	named   bool // Name is a string (possibly invalid)
	problem string
	// decoded holds the objects entry decoded (the entry's and its
	// source's), keyed by their bytes, for claudeEntryRules to read
	// instead of decoding them again; dropped once it has run.
	decoded map[string]map[string]json.RawMessage
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
	s.Status, s.Code, s.problem = st, code, plugind.RedactSecrets(fmt.Sprintf(format, args...))
}

func (s *entryState) fail(format string, args ...any) {
	s.set(StatusError, plugind.CodeInvalidSource, format, args...)
}

func (s *entryState) skip(code plugind.Code, format string, args ...any) {
	s.set(StatusSkipped, code, format, args...)
}

func (s *entryState) label() string {
	if s.named && s.Name != "" {
		return fmt.Sprintf("marketplace entry %q (plugins[%d])", s.Name, s.idx)
	}
	return fmt.Sprintf("marketplace entry plugins[%d]", s.idx)
}

func (s *entryState) finish() Entry {
	e := s.Entry
	if e.Status == "" {
		e.Status = StatusReady
	}
	if e.Status != StatusReady {
		e.Reason = s.label() + ": " + s.problem
		// Unpinned means "ready only because of AllowUnpinned"; an entry
		// refused for another reason (strict: false, a duplicate name) is
		// not ready at all.
		e.Unpinned = false
	} else {
		e.Code = ""
	}
	return e
}

func (p *parser) entry(i int, raw json.RawMessage) entryState {
	s := entryState{idx: i}
	s.Kind = KindUnknown
	at := fmt.Sprintf("plugins[%d]", i)
	var obj map[string]json.RawMessage
	if t := jsonType(raw); t != "object" || json.Unmarshal(raw, &obj) != nil {
		s.fail("expected an object with \"name\" and \"source\", found %s", describeType(t))
		return s
	}
	s.decoded = map[string]map[string]json.RawMessage{string(raw): obj}
	p.unknown(at, obj, p.f.entryFields)

	switch nameRaw, ok := obj["name"]; {
	case !ok:
		s.fail("has no \"name\"")
	case jsonType(nameRaw) != "string":
		s.fail("\"name\" must be a string, found %s", describeType(jsonType(nameRaw)))
	default:
		s.Name = decodeString(nameRaw)
		s.named = true
		if err := plugind.ValidateName(s.Name); err != nil {
			s.fail("%v", err)
		}
	}
	s.Manifest = manifestFields(obj)
	s.Version, _ = p.optString(at+".version", obj["version"])
	s.Description, _ = p.optString(at+".description", obj["description"])
	if !p.f.codex {
		p.strict(&s, obj["strict"])
	} else {
		p.policy(&s, at, obj["policy"])
	}

	srcRaw, ok := obj["source"]
	switch t := jsonType(srcRaw); {
	case !ok:
		s.fail("has no \"source\"")
	case t == "string":
		var src string
		_ = json.Unmarshal(srcRaw, &src)
		p.stringSource(&s, src)
	case t == "object":
		var o map[string]json.RawMessage
		if json.Unmarshal(srcRaw, &o) != nil {
			s.fail("\"source\" is not a readable object")
			break
		}
		s.decoded[string(srcRaw)] = o
		p.objectSource(&s, at+".source", o)
	default:
		s.fail("\"source\" must be a path string or an object, found %s", describeType(t))
	}
	return s
}

func (p *parser) strict(s *entryState, raw json.RawMessage) {
	if raw == nil {
		return
	}
	switch jsonType(raw) {
	case "boolean":
		var b bool
		_ = json.Unmarshal(raw, &b)
		s.Strict = &b
	case "null":
	default:
		// A mistyped strict ("false") may mean false; guessing true could
		// install a plugin without its manifest, so the entry is refused.
		s.fail("\"strict\" must be true or false, found %s", describeType(jsonType(raw)))
	}
}

// policy honours Codex's policy.installation: a NOT_AVAILABLE plugin is
// listed but not installable.
func (p *parser) policy(s *entryState, at string, raw json.RawMessage) {
	if raw == nil {
		return
	}
	var o map[string]json.RawMessage
	if jsonType(raw) != "object" || json.Unmarshal(raw, &o) != nil {
		p.warn("%s.policy: expected an object, found %s; ignored", at, describeType(jsonType(raw)))
		return
	}
	inst, _ := p.optString(at+".policy.installation", o["installation"])
	if inst == "NOT_AVAILABLE" {
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
		clean = path.Join(p.m.PluginRoot, clean)
		if clean == "" {
			clean = "."
		}
	}
	s.Path = clean
}

func (p *parser) objectSource(s *entryState, at string, o map[string]json.RawMessage) {
	typRaw, ok := o["source"]
	if !ok {
		s.fail("the \"source\" object has no \"source\" type field (expected one of \"url\", \"github\", \"git-subdir\")")
		return
	}
	if jsonType(typRaw) != "string" {
		s.fail("source.source must be a string naming the source type, found %s", describeType(jsonType(typRaw)))
		return
	}
	var typ string
	_ = json.Unmarshal(typRaw, &typ)
	if known, ok := sourceFields[typ]; ok && (typ != "local" || p.f.codex) {
		p.unknown(at, o, known)
	}
	switch typ {
	case "url":
		s.Kind = KindURL
		p.urlSource(s, o)
	case "github":
		s.Kind = KindGitHub
		p.githubSource(s, o)
	case "git-subdir":
		s.Kind = KindGitSubdir
		p.gitSubdirSource(s, o)
	case "local":
		if !p.f.codex {
			s.skip(plugind.CodeNotPinnable, "source type \"local\" is Codex's; a Claude marketplace names a local plugin with a path string such as \"./plugins/NAME\"")
			return
		}
		s.Kind = KindRelative
		pathStr, present, err := stringField(o, "path")
		switch {
		case err != nil:
			s.fail("%v", err)
		case !present:
			s.fail("the \"local\" source has no \"path\"")
		default:
			p.relative(s, "source.path", pathStr)
		}
	case "npm":
		s.Kind = KindNPM
		s.skip(plugind.CodeNotPinnable, "npm sources are not supported (nothing from a package registry can be pinned to a commit)")
	case "pip":
		s.Kind = KindPip
		s.skip(plugind.CodeNotPinnable, "pip sources are not supported (nothing from a package registry can be pinned to a commit)")
	default:
		s.skip(plugind.CodeNotPinnable, "source type %q is not supported (supported: relative paths, \"url\", \"github\", \"git-subdir\")", typ)
	}
}

func (p *parser) urlSource(s *entryState, o map[string]json.RawMessage) {
	u, ok := requiredString(s, o, "url", "the \"url\" source has no \"url\"")
	if !ok {
		return
	}
	if !source.LooksLikeRepoURL(u) {
		// Not a URL at all ("./", a bare name): nothing this product can
		// fetch, so skipped like other kinds it does not support.
		s.skip(plugind.CodeNotPinnable, "source.url %q is not a repository URL (https://HOST/PATH)", source.Display(u))
		return
	}
	r, err := source.ParseRepoURL(u, false)
	if err != nil {
		s.fail("source.url: %v", err)
		return
	}
	s.Remote = r
	p.pin(s, o, "url", false)
}

func (p *parser) githubSource(s *entryState, o map[string]json.RawMessage) {
	repo, ok := requiredString(s, o, "repo", "the \"github\" source has no \"repo\" (OWNER/REPO)")
	if !ok {
		return
	}
	if strings.Count(repo, "/") != 1 {
		s.fail("source.repo %q must be OWNER/REPO", source.Display(repo))
		return
	}
	r, err := source.GitHubRepo(repo)
	if err != nil {
		s.fail("source.repo %q is not a valid GitHub OWNER/REPO: %v", source.Display(repo), err)
		return
	}
	s.Remote = r
	_, hasCommit := o["commit"]
	p.pin(s, o, "github", hasCommit)
}

// pin reads sha, ref and path of a url/github source and decides whether
// it is pinned. The older official marketplaces spell the pin "commit"; it
// is not Claude's field, so it stays an unknown field (warned) and the entry
// counts as unpinned, with the reason saying how to fix it.
func (p *parser) pin(s *entryState, o map[string]json.RawMessage, typ string, hasCommit bool) {
	if !p.readPin(s, o) {
		return
	}
	if sub, present, err := stringField(o, "path"); err != nil {
		s.fail("%v", err)
		return
	} else if present {
		clean, err := cleanPath("source.path", sub)
		if err != nil {
			s.fail("%v; the plugin's subdirectory must stay inside the repository", err)
			return
		}
		if clean != "." {
			s.Path = clean
		}
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
func (p *parser) readPin(s *entryState, o map[string]json.RawMessage) bool {
	sha, hasSHA, err := stringField(o, "sha")
	if err != nil {
		s.fail("%v", err)
		return false
	}
	if hasSHA {
		if !source.IsSHA(sha) {
			s.fail("source.sha %q is not a full 40-character lowercase hex commit SHA", source.Display(sha))
			return false
		}
		s.SHA = sha
	}
	ref, hasRef, err := stringField(o, "ref")
	if err != nil {
		s.fail("%v", err)
		return false
	}
	if hasRef {
		if err := checkRef(ref); err != nil {
			s.fail("source.ref %q %v", ref, err)
			return false
		}
		s.Ref = ref
	}
	return true
}

// gitSubdirSource accepts a well-formed git-subdir entry as ready whatever
// its pin: the resolver pins it to a SHA at plan time (sha, else ref, else
// the default branch).
func (p *parser) gitSubdirSource(s *entryState, o map[string]json.RawMessage) {
	u, ok := requiredString(s, o, "url", "the \"git-subdir\" source has no \"url\"")
	if !ok {
		return
	}
	r, err := source.ParseRepoURL(u, true)
	if err != nil {
		s.fail("source.url: %v", err)
		return
	}
	s.Remote = r
	sub, present, err := stringField(o, "path")
	switch {
	case err != nil:
		s.fail("%v", err)
		return
	case !present:
		s.fail("the \"git-subdir\" source has no \"path\" (the plugin's subdirectory in %s)", s.Remote.Key())
		return
	}
	clean, err := cleanPath("source.path", sub)
	if err != nil {
		s.fail("%v; the plugin's subdirectory must stay inside the repository", err)
		return
	}
	if clean != "." {
		s.Path = clean
	}
	p.readPin(s, o)
}

// stringField reads an optional string field of a source object; null
// counts as absent.
// requiredString reads a string field that must be present and non-empty,
// failing the entry with missing (or the type error) when it is not.
func requiredString(s *entryState, o map[string]json.RawMessage, key, missing string) (string, bool) {
	v, present, err := stringField(o, key)
	switch {
	case err != nil:
		s.fail("%v", err)
		return "", false
	case !present || v == "":
		s.fail("%s", missing)
		return "", false
	}
	return v, true
}

func stringField(o map[string]json.RawMessage, key string) (string, bool, error) {
	raw, ok := o[key]
	if !ok || jsonType(raw) == "null" {
		return "", false, nil
	}
	if t := jsonType(raw); t != "string" {
		return "", false, fmt.Errorf("source.%s must be a string, found %s", key, describeType(t))
	}
	if v, ok := plainString(raw); ok {
		return v, true, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false, fmt.Errorf("source.%s: %v", key, err)
	}
	return v, true, nil
}

// entryManifestKeys are the fields of an entry that say what its plugin is
// and holds, as its plugin.json would (Claude's strict semantics): with
// strict: false they are the plugin's manifest.
var entryManifestKeys = []string{"version", "description", "author", "homepage", "repository", "license", "keywords", "dependencies",
	"commands", "agents", "skills", "hooks", "mcpServers", "lspServers", "outputStyles", "themes", "channels", "monitors", "settings", "userConfig"}

// manifestFields is the entry's manifest fields as a JSON object, or nil
// when it has none.
func manifestFields(obj map[string]json.RawMessage) json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, k := range entryManifestKeys {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return data
}
