package marketplace

import (
	"encoding/json"

	"reasonix.io/plugind/manifest"
)

// claudeEntryRules is the install path's side of `reasonix plugin
// validate`: an entry this product would install, but that validate calls
// invalid under Claude Code's marketplace rules (an "agents" directory, a
// mistyped field, a null where a value belongs…), is refused with those
// errors instead. Entries already skipped or refused keep their reason.
// One exception, SPEC §7's: a relative source without "./" is read under
// metadata.pluginRoot here, though Claude Code refuses it (validate says
// so).
func (p *parser) claudeEntryRules(s *entryState, raw json.RawMessage) {
	decoded := s.decoded
	s.decoded = nil
	if p.f.codex || s.Status != "" {
		return
	}
	var r manifest.Report
	v := &docCheck{r: &r, bareRelative: true, decoded: decoded}
	v.entry(s.idx, raw)
	if r.OK() {
		return
	}
	s.fail("does not follow Claude Code's marketplace rules (see: reasonix plugin validate): %s", r.Summary(3))
}
