package manifest

import (
	"sync"

	"reasonix.io/plugind/internal/jsondoc"
)

// Codex is the field table of .codex-plugin/plugin.json, after the
// SchemaStore Codex plugin manifest schema. Its rows carry roles only:
// Codex has no validator whose verdict `validate` could match, so a Codex
// manifest is judged by what install makes of it. Hooks are read as
// Claude's, because packages that ship both manifests use them.
var Codex = sync.OnceValue(func() *jsondoc.Table {
	meta := func(key string) jsondoc.Row { return jsondoc.Row{Key: key, Role: jsondoc.Meta} }
	component := func(key string) jsondoc.Row { return jsondoc.Row{Key: key, Role: jsondoc.Component} }
	return jsondoc.NewTable(CodexManifest,
		meta("id"), meta("name"), meta("version"), meta("description"), meta("interface"),
		meta("author"), meta("homepage"), meta("repository"), meta("license"), meta("keywords"),
		component("skills"), component("mcpServers"), component("hooks"),
		jsondoc.Row{Key: "apps", Role: jsondoc.Unsupported})
})
