// Package policy is the team mirror's operator policy (SPEC §15): a JSON
// file {"allow": [RULE…], "block": [RULE…]} whose RULE is "host",
// "host/owner" or "host/owner/repo". A repository is refused when a block
// rule matches it, or when the allow list is not empty and no allow rule
// matches it; block wins. Rules are spelled as source keys are (hosts in
// IDNA's ASCII form), so "bücher.example" blocks what sources call
// "xn--bcher-kva.example". The refusal names the rule, so a user who gets
// install.blocked knows what to ask the operator about. Its "runtime" member
// governs the code plugins fetch when they run (runtime.go).
package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode"

	"reasonix.io/plugind/source"
)

// Policy is a parsed policy. The zero value allows everything.
type Policy struct {
	allow   []rule
	block   []rule
	runtime Runtime
}

// rule is one RULE, split into its segments, each spelled as source keys
// spell it.
type rule struct {
	text string   // as the operator wrote it (for messages)
	segs []string // host (IDNA ASCII), owner, repo — lower case, 1 to 3 of them
}

// file is the document's shape; unknown members are errors, since a typo in
// an operator's policy ("blok") must not silently allow everything.
type file struct {
	Allow   []string `json:"allow"`
	Block   []string `json:"block"`
	Runtime string   `json:"runtime"`
}

// Load reads the policy file at path.
func Load(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// Parse reads a policy document.
func Parse(b []byte) (*Policy, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a policy document ({\"allow\": [RULE…], \"block\": [RULE…], \"runtime\": \"allow\" or \"block-unpinned\"}): %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the policy document")
	}
	rt, err := ParseRuntime(f.Runtime)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	p := &Policy{runtime: rt}
	for _, list := range []struct {
		name string
		in   []string
		out  *[]rule
	}{{"allow", f.Allow, &p.allow}, {"block", f.Block, &p.block}} {
		for i, s := range list.in {
			r, err := parseRule(s)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", list.name, i, err)
			}
			*list.out = append(*list.out, r)
		}
	}
	return p, nil
}

// parseRule checks one RULE: 1 to 3 segments, a host name first, no
// scheme, no whitespace. Each segment is spelled as sources spell it, so a
// rule matches exactly the sources it names: the host through
// source.NormalizeHost (IDNA: "bücher.example" is the
// "xn--bcher-kva.example" sources carry), the rest lower-cased and held to
// the characters a source's path may have — a rule no source could match
// is refused rather than silently never applying. A trailing ".git" on the
// repository is dropped as sources drop it.
func parseRule(s string) (rule, error) {
	if s == "" {
		return rule{}, errors.New("empty rule; write host, host/owner or host/owner/repo")
	}
	if strings.Contains(s, "://") {
		return rule{}, fmt.Errorf("rule %q has a scheme; write host, host/owner or host/owner/repo", s)
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return rule{}, fmt.Errorf("rule %q contains whitespace or a control character", s)
	}
	segs := strings.Split(s, "/")
	if len(segs) > 3 {
		return rule{}, fmt.Errorf("rule %q has %d segments; write host, host/owner or host/owner/repo", s, len(segs))
	}
	if slices.ContainsFunc(segs, func(seg string) bool { return seg == "" || seg == "." || seg == ".." }) {
		return rule{}, fmt.Errorf("rule %q has an empty, \".\" or \"..\" segment", s)
	}
	if strings.ContainsAny(segs[0], ":@") || !strings.Contains(segs[0], ".") {
		return rule{}, fmt.Errorf("rule %q does not start with a host name (such as github.com)", s)
	}
	host, err := source.NormalizeHost(segs[0])
	if err != nil {
		return rule{}, fmt.Errorf("rule %q: %w", s, err)
	}
	segs[0] = host
	for i, seg := range segs[1:] {
		if err := source.CheckSegment(seg); err != nil {
			return rule{}, fmt.Errorf("rule %q can match no source: its path %w", s, err)
		}
		segs[i+1] = strings.ToLower(seg)
	}
	if len(segs) == 3 {
		segs[2] = strings.TrimSuffix(segs[2], ".git")
	}
	return rule{text: s, segs: segs}, nil
}

// matches reports whether the rule covers the repository key
// ("github.com/owner/repo", "git.example.test/group/sub/tools"): its
// segments are a whole-segment prefix of the key's.
func (r rule) matches(key []string) bool {
	return len(r.segs) <= len(key) && slices.Equal(r.segs, key[:len(r.segs)])
}

// keyMatcher reports which rules cover the repository key. Hosts and paths
// compare case-insensitively (GitHub names are, and neither a block nor a
// scope may be side-stepped by spelling a name differently), and a trailing
// ".git" is dropped as sources drop it.
func keyMatcher(key string) func(rule) bool {
	segs := strings.Split(strings.ToLower(strings.TrimSuffix(key, ".git")), "/")
	return func(r rule) bool { return r.matches(segs) }
}

// Decision is the policy's answer for one repository.
type Decision struct {
	Allowed bool
	// Rule is the rule that decided, as written in the file: the block rule
	// that refused, the allow rule that admitted; "" when the allow list is
	// empty (everything allowed) or when nothing in a non-empty allow list
	// matched.
	Rule string
	// List is "block" or "allow": the list Rule is from, or, for a refusal
	// with no Rule, "allow" (nothing in it matched).
	List string
}

// Reason says, in one sentence, why a refused repository was refused.
func (d Decision) Reason(key string) string {
	if d.Allowed {
		return ""
	}
	if d.Rule != "" {
		return fmt.Sprintf("%s is blocked by the mirror's policy (block rule %q)", key, d.Rule)
	}
	return fmt.Sprintf("%s is not allowed by the mirror's policy (no allow rule matches it)", key)
}

// Check decides for the repository key (host/path, as source.Key spells
// it), as keyMatcher compares.
func (p *Policy) Check(key string) Decision {
	if p == nil {
		return Decision{Allowed: true}
	}
	matches := keyMatcher(key)
	if i := slices.IndexFunc(p.block, matches); i >= 0 {
		return Decision{Allowed: false, Rule: p.block[i].text, List: "block"}
	}
	if len(p.allow) == 0 {
		return Decision{Allowed: true}
	}
	if i := slices.IndexFunc(p.allow, matches); i >= 0 {
		return Decision{Allowed: true, Rule: p.allow[i].text, List: "allow"}
	}
	return Decision{Allowed: false, List: "allow"}
}

// Rules returns the number of allow and block rules (for the start-up log).
func (p *Policy) Rules() (allow, block int) {
	if p == nil {
		return 0, 0
	}
	return len(p.allow), len(p.block)
}
