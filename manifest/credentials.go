package manifest

import (
	"slices"

	"reasonix.io/plugind"
	"reasonix.io/plugind/secrets"
)

// StripCredentials returns a copy of a manifest, .mcp.json, hooks or
// .claude/settings.json file's data with every literal credential replaced
// by an environment variable reference (secrets.Strip), and the list of
// those variables. When nothing changes, out is data itself; otherwise
// keys keep their order and the JSON is re-indented.
func StripCredentials(relPath string, data []byte) ([]byte, []string, bool, error) {
	doc, err := parseJSON(relPath, data)
	if err != nil {
		return nil, nil, false, plugind.WithCode(plugind.CodeInvalidSource, err)
	}
	vars, changed := secrets.Strip(doc)
	if !changed {
		return data, vars, false, nil
	}
	return doc.Marshal(), vars, true, nil
}

// CredentialFiles lists, relative to the package root, the files an export
// must pass through StripCredentials: the manifest, every MCP and hooks
// JSON file the package declared or ships by convention, and
// .claude/settings.json. It is complete for a Package returned by Load or
// a Parse function.
func CredentialFiles(p *Package) []string {
	files := slices.Clone(p.configFiles)
	if p.ManifestPath != "" {
		files = append(files, p.ManifestPath)
	}
	slices.Sort(files)
	return slices.Compact(files)
}
