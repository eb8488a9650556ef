package marketplace

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/secrets"
)

// format is what differs between the Claude and the Codex document.
type format struct {
	file   string // how messages name the document
	tables func() tables
	codex  bool // "local" sources, policy.installation, no pluginRoot/strict
}

var (
	claudeFormat = format{file: ".claude-plugin/marketplace.json", tables: claudeTables}
	codexFormat  = format{file: ".agents/plugins/marketplace.json", tables: codexTables, codex: true}
)

// parser carries one document's state through classification.
type parser struct {
	f       format
	opts    Options
	m       *Marketplace
	rootErr string // why metadata.pluginRoot is unusable; "" when fine
	hasRoot bool
}

// read decodes a marketplace document once, walks it with its format's
// tables and classifies its entries as install reads them. The report is
// what validate says (Claude Code's verdict, with Reasonix's differences
// named); in Install mode, what the report refuses is refused: the whole
// document for a finding outside the entries, an entry for one inside it.
// err is a document unusable as a whole; in Validate mode that is a
// finding too, and err is nil.
func read(data []byte, opts Options, f format, mode jsondoc.Mode) (*Marketplace, jsondoc.Report, error) {
	var r jsondoc.Report
	refuse := func(format string, args ...any) (*Marketplace, jsondoc.Report, error) {
		msg := fmt.Sprintf(format, args...)
		if mode == jsondoc.Validate {
			r.Errorf("", "%s", msg)
			return nil, r, nil
		}
		return nil, r, plugind.Errorf(plugind.CodeInvalidSource, "%s: %s", f.file, secrets.Mask(msg))
	}
	data, bom := jsondoc.TrimBOM(data)
	if bom {
		r.Keep("", "Reasonix reads it without the mark", "the file starts with a UTF-8 byte-order mark, which Claude Code's JSON parser rejects; save it without one")
	}
	doc, dups, err := jsondoc.Parse(data)
	if err != nil {
		return refuse("%v", err)
	}
	if doc.Kind != jsondoc.Object {
		return refuse("expected a JSON object with a \"plugins\" array, found %s", describe(doc))
	}
	plugins := doc.Get("plugins")
	if mode == jsondoc.Install {
		switch {
		case plugins == nil:
			return refuse("%s", missingPlugins(doc))
		case plugins.Kind != jsondoc.Array:
			return refuse("expected \"plugins\" to be an array of entries, found %s", describe(plugins))
		}
	}
	if plugins != nil && plugins.Kind == jsondoc.Array && len(plugins.Items) > MaxEntries {
		return refuse("lists %d plugin entries; the limit is %d", len(plugins.Items), MaxEntries)
	}
	t := f.tables()
	(&jsondoc.Walk{Report: &r, Mode: mode, Dups: dups}).Document(t.top, doc)
	if plugins == nil || plugins.Kind != jsondoc.Array {
		return nil, r, nil
	}
	top, entries := byEntry(r, len(plugins.Items))
	if mode == jsondoc.Install && top.Refused() {
		return refuse("does not follow Claude Code's marketplace rules (see: reasonix plugin validate): %s", top.Summary(3))
	}

	// The document's warnings quote it, so credentials in it are masked.
	warnings := make([]string, 0, len(top.Warnings))
	for _, w := range top.Warnings {
		warnings = append(warnings, secrets.Mask(w.Line()))
	}
	p := &parser{f: f, opts: opts, m: &Marketplace{Name: doc.GetStr("name"), Description: doc.GetStr("description"), Warnings: warnings}}
	if md := doc.Get("metadata"); md != nil && !f.codex {
		p.metadata(md)
	}
	if list, ok := doc.Get("allowCrossMarketplaceDependenciesOn").StringList(); ok && !f.codex {
		p.m.AllowCrossMarketplaceDependenciesOn = list
	}
	p.m.Entries = make([]Entry, len(plugins.Items))
	for i := range plugins.Items {
		s := p.entry(i, &plugins.Items[i])
		found := entries[i]
		if found.Refused() {
			rules := "does not follow Claude Code's marketplace rules (see: reasonix plugin validate): " + found.Summary(3)
			if s.Status == StatusError {
				// Both readings refuse it: say both.
				s.problem += "; it also " + secrets.Mask(rules)
			} else {
				s.set(StatusError, plugind.CodeInvalidSource, "%s", rules)
				s.claude = true
			}
		}
		for _, d := range found.Differences() {
			s.Warnings = append(s.Warnings, secrets.Mask(d))
		}
		for _, w := range found.Warnings {
			if w.Kept == "" && w.Refused == "" {
				p.m.Warnings = append(p.m.Warnings, secrets.Mask(w.Line()))
			}
		}
		p.m.Entries[i] = s.finish()
		if mode == jsondoc.Validate && !s.claude && p.m.Entries[i].Status != StatusReady {
			reasonixVerdict(&r, i, p.m.Entries[i], f.codex)
		}
	}
	if !f.codex {
		p.m.Renames = renamesOf(doc.Get("renames"))
	}
	return p.m, r, nil
}

// byEntry splits a report's findings between the document's own (top)
// and each entry's (a path under plugins[i]).
func byEntry(r jsondoc.Report, n int) (top jsondoc.Report, entries []jsondoc.Report) {
	entries = make([]jsondoc.Report, n)
	which := func(p string) *jsondoc.Report {
		rest, ok := strings.CutPrefix(p, "plugins[")
		if end := strings.IndexByte(rest, ']'); ok && end >= 0 {
			if i, err := strconv.Atoi(rest[:end]); err == nil && i >= 0 && i < n {
				return &entries[i]
			}
		}
		return &top
	}
	for _, f := range r.Errors {
		to := which(f.Path)
		to.Errors = append(to.Errors, f)
	}
	for _, f := range r.Warnings {
		to := which(f.Path)
		to.Warnings = append(to.Warnings, f)
	}
	return top, entries
}

// reasonixVerdict adds, as a warning that says so, an entry Reasonix skips
// or refuses for reasons of its own (no sha pin, a name it cannot install
// under…), when the document's rules found nothing wrong with it. Codex's
// format has no other verdict: there a refusal is an error.
func reasonixVerdict(r *jsondoc.Report, i int, e Entry, codex bool) {
	at := jsondoc.Index("plugins", i)
	reason := strings.TrimPrefix(e.Reason, entryLabel(i, e.Name)+": ")
	if codex && e.Status == StatusError {
		r.Errorf(at, "%s", reason)
		return
	}
	if e.Status == StatusSkipped {
		r.Refuse(at, "Reasonix skips it", "Reasonix skips this entry in a bulk install: %s", reason)
		return
	}
	r.Refuse(at, "Reasonix cannot install it", "Reasonix cannot install this entry: %s", reason)
}

func entryLabel(i int, name string) string {
	if name != "" {
		return fmt.Sprintf("marketplace entry %q (plugins[%d])", name, i)
	}
	return fmt.Sprintf("marketplace entry plugins[%d]", i)
}

// missingPlugins explains a document without a "plugins" field, naming what
// was found instead so the author can tell which format they wrote.
func missingPlugins(doc *node) string {
	keys := doc.Keys()
	sort.Strings(keys)
	found := "an empty object"
	if len(keys) > 0 {
		found = "top-level fields " + strings.Join(jsondoc.QuoteEach(keys), ", ")
	}
	msg := fmt.Sprintf("expected a top-level \"plugins\" array, found no \"plugins\" field (%s)", found)
	for _, k := range keys {
		if doc.Get(k).Get("plugins") != nil {
			msg += fmt.Sprintf("; the plugins are wrapped in a %q object, which is not the Claude Code or Codex marketplace format (\"plugins\" must be at the top level, each entry with a \"source\")", k)
			break
		}
	}
	return msg
}

func (p *parser) metadata(md *node) {
	p.m.Description = cmp.Or(p.m.Description, md.GetStr("description"))
	root := md.Get("pluginRoot")
	if root == nil || md.Kind != jsondoc.Object {
		return
	}
	p.hasRoot = true
	if root.Kind != jsondoc.String {
		p.rootErr = fmt.Sprintf("metadata.pluginRoot must be a string, found %s", describe(root))
		return
	}
	clean, err := cleanPath("metadata.pluginRoot", root.Str)
	if err != nil {
		p.rootErr = err.Error()
		p.m.Warnings = append(p.m.Warnings, p.rootErr+"; entries with bare-name sources cannot be placed")
		return
	}
	if clean != "." {
		p.m.PluginRoot = clean
	}
}
