package manifest

import (
	"fmt"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
)

// `reasonix plugin validate` for Claude plugin manifests
// (.claude-plugin/plugin.json) is the walk of ClaudePlugin's table; this
// file is how a document gets there, for validate and for install.

// folder is what a plugin document's declared paths are looked up in
// (jsondoc.Walk.Ctx): t, or nothing when t is nil and err is too; err is
// why the folder could not be opened.
type folder struct {
	t   *tree
	err error
	// entry: the paths are a marketplace entry's. Claude Code installs
	// such a plugin and skips a path that is not there (a load error it
	// logs), so that is a warning; in plugin.json it is an error, as
	// Claude's validator says.
	entry bool
}

// CheckClaudeManifest checks a .claude-plugin/plugin.json document. When
// root is not "", it is the plugin folder, and the component paths the
// document declares must exist in it, as Claude's validator requires.
func CheckClaudeManifest(data []byte, root string) Report {
	f := &folder{}
	if root != "" {
		f.t, f.err = openTree(root)
	}
	return checkDocument(data, ClaudePlugin(), f)
}

// checkDocument checks data, a document of table t (ctx is the walk's
// Ctx), as Claude Code reads it: a byte-order mark is a syntax error
// there, so it is one here (Reasonix's installer reads such a file, saying
// so; Claude Code cannot). The keys it repeats are for the walk to report.
func checkDocument(data []byte, t *jsondoc.Table, ctx any) Report {
	var r Report
	if _, bom := jsondoc.TrimBOM(data); bom {
		r.Keep("", "Reasonix reads the file without its byte-order mark", "the file starts with a UTF-8 byte-order mark, which Claude Code's JSON parser rejects; save it without one")
		return r
	}
	doc, dups, err := jsondoc.Parse(data)
	if err != nil {
		r.Errorf("", "the document is %v", err)
		return r
	}
	(&jsondoc.Walk{Report: &r, Ctx: ctx, Dups: dups}).Document(t, doc)
	return r
}

// parseJSON decodes a package's JSON document named name for install: a
// byte-order mark is dropped (Claude Code refuses it; validate says so).
func parseJSON(name string, data []byte) (*node, error) {
	data, _ = jsondoc.TrimBOM(data)
	doc, _, err := jsondoc.Parse(data)
	if err != nil {
		return nil, plugind.WithCode(plugind.CodeInvalidSource, fmt.Errorf("%s is %w", name, err))
	}
	return doc, nil
}

// refuseInvalidClaude is the install path's side of `reasonix plugin
// validate`: a Claude manifest that validate calls invalid — a schema
// error, or a declared component path that is missing, leaves the folder
// or is not what its field needs — is refused, naming the errors, rather
// than installed with the offending parts skipped. Claude Code refuses to
// load such a manifest too. What it returns are the differences Reasonix
// keeps, as warnings.
func refuseInvalidClaude(doc *node, f *folder, label string) ([]string, error) {
	var r Report
	(&jsondoc.Walk{Report: &r, Mode: jsondoc.Install, Ctx: f}).Document(ClaudePlugin(), doc)
	if r.Refused() {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s does not follow Claude Code's plugin manifest rules (see: reasonix plugin validate): %s", label, r.Summary(3))
	}
	var kept []string
	for _, w := range r.Differences() {
		kept = append(kept, label+": "+w)
	}
	return kept, nil
}
