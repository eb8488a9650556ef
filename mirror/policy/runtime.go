package policy

import "fmt"

// Runtime is the policy's rule for code plugins fetch when they run
// (SPEC §17): `npx -y pkg@latest`, `uvx tool`, an image without a digest,
// a download piped to a shell. The mirror serves content, not plans, so it
// tells its clients the rule (GET /v1/policy) and their installer applies
// it to each plan.
type Runtime string

// Runtime rules.
const (
	// RuntimeAllow installs plugins whatever they fetch at run time (the
	// review still shows it). A policy without "runtime" says this.
	RuntimeAllow Runtime = "allow"
	// RuntimeBlockUnpinned blocks (install.blocked) every plugin that runs
	// code fetched at run time that no exact version, == or image digest
	// pins.
	RuntimeBlockUnpinned Runtime = "block-unpinned"
)

// ParseRuntime reads a runtime rule as a policy file or a mirror's answer
// spells it: "" (none: allow), "allow" or "block-unpinned". Anything else
// is refused, naming it: a misspelt "block" must not allow everything.
func ParseRuntime(s string) (Runtime, error) {
	switch Runtime(s) {
	case "", RuntimeAllow:
		return RuntimeAllow, nil
	case RuntimeBlockUnpinned:
		return RuntimeBlockUnpinned, nil
	}
	shown := s
	if len(shown) > 60 {
		shown = shown[:57] + "..."
	}
	return "", fmt.Errorf("%q is not a runtime rule: write %q or %q", shown, RuntimeAllow, RuntimeBlockUnpinned)
}

// Runtime is the policy's runtime rule (RuntimeAllow for a nil policy or
// one without the member).
func (p *Policy) Runtime() Runtime {
	if p == nil || p.runtime == "" {
		return RuntimeAllow
	}
	return p.runtime
}
