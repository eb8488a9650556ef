package manifest

import "reasonix.io/plugind"

// refuseInvalidClaude is the install path's side of `reasonix plugin
// validate`: a Claude manifest that validate calls invalid — a schema
// error, or a declared component path that is missing, leaves the folder
// or is not what its field needs — is refused, naming the errors, rather
// than installed with the offending parts skipped. Claude Code refuses to
// load such a manifest too.
func refuseInvalidClaude(doc *node, root string) error {
	var r Report
	checkClaudeDoc(doc, root, &r)
	if r.OK() {
		return nil
	}
	return plugind.Errorf(plugind.CodeInvalidSource, "%s does not follow Claude Code's plugin manifest rules (see: reasonix plugin validate): %s", ClaudeManifest, r.Summary(3))
}
