package marketplace

import (
	"fmt"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
)

// Claude Code's marketplace names (2.1.197): the names it reserves for
// official Anthropic marketplaces, accepted only from a GitHub repository
// of the anthropics organization; the pattern of names that impersonate
// one, refused from anywhere; and its internal names.
var (
	reservedNames = []string{
		"claude-code-marketplace", "claude-code-plugins", "claude-plugins-official",
		"anthropic-marketplace", "anthropic-plugins", "agent-skills", "anthropic-agent-skills",
		"life-sciences", "knowledge-work-plugins", "claude-for-legal",
		"claude-for-financial-services", "financial-services-plugins",
		"claude-community", "claude-plugins-community",
	}
	impersonation = lazyregexp.New(`(?i)(?:official[^a-z0-9]*(anthropic|claude)|(?:anthropic|claude)[^a-z0-9]*official|^(?:anthropic|claude)[^a-z0-9]*(marketplace|plugins|official))`)
	internalNames = map[string]string{
		"inline":     "is reserved for --plugin-dir session plugins",
		"builtin":    "is reserved for built-in plugins",
		"skills-dir": "is reserved for plugins auto-loaded from .claude/skills/",
	}
)

// officialOwner is the GitHub organization reserved names belong to.
const officialOwner = "anthropics"

func isReserved(name string) bool { return slices.Contains(reservedNames, strings.ToLower(name)) }

// marketplaceName is Claude Code's rule for a marketplace's name.
func marketplaceName() *jsondoc.Shape {
	return str().NonEmpty().Check(func(s string) string {
		switch {
		case strings.Contains(s, " "):
			return fmt.Sprintf("marketplace name %q must not contain spaces (use kebab-case, e.g. \"my-marketplace\")", s)
		case strings.ContainsAny(s, `/\`) || strings.Contains(s, "..") || s == ".":
			return fmt.Sprintf("marketplace name %q must not contain '/', '\\' or \"..\", nor be \".\"", s)
		case !isReserved(s) && (strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 || impersonation.MatchString(s)):
			return fmt.Sprintf("marketplace name %q impersonates an official Anthropic/Claude marketplace", jsondoc.Clip(s, 80))
		}
		if why, ok := internalNames[strings.ToLower(s)]; ok {
			return fmt.Sprintf("marketplace name %q %s", s, why)
		}
		return ""
	})
}

// CheckReservedName refuses a marketplace that calls itself by a name
// Claude Code reserves for official Anthropic marketplaces, unless it comes
// from where Claude Code accepts that name: a GitHub repository of the
// anthropics organization. src is where the marketplace was read.
func CheckReservedName(name string, src source.Source) error {
	if !isReserved(name) {
		return nil
	}
	if src.Kind == source.GitHub && strings.EqualFold(src.Owner(), officialOwner) {
		return nil
	}
	return plugind.Errorf(plugind.CodeInvalidSource, "the marketplace name %q is reserved for official Anthropic marketplaces: Claude Code accepts it only from a GitHub repository of github.com/%s/, and this marketplace comes from %s", name, officialOwner, secrets.Mask(src.String()))
}
