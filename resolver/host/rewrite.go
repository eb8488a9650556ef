package host

import (
	"fmt"
	"strings"

	"reasonix.io/plugind/secrets"
)

// Rewrite maps where a repository is named to where its bytes come from,
// like git's url.<TO>.insteadOf <FROM>: sources keep naming the real host
// (so caches, plans and the registry say "github.com" or
// "git.example.test"), and only the transport goes elsewhere — a fake on
// loopback in tests, a mirror in a company. The longest matching prefix wins.
type Rewrite struct {
	rules []rewriteRule
}

type rewriteRule struct{ from, to string }

// ParseRewrite reads REASONIX_URL_REWRITE: "FROM=TO[ FROM=TO…]".
func ParseRewrite(spec string) (*Rewrite, error) {
	rw := &Rewrite{}
	for _, pair := range strings.Fields(spec) {
		from, to, ok := strings.Cut(pair, "=")
		// Shown with any credential masked, side by side (a mirror's URL
		// may carry one).
		shown := secrets.Mask(pair)
		if ok {
			shown = secrets.Mask(from) + "=" + secrets.Mask(to)
		}
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("REASONIX_URL_REWRITE: %q is not FROM=TO", shown)
		}
		if !strings.Contains(from, "://") || !strings.Contains(to, "://") {
			return nil, fmt.Errorf("REASONIX_URL_REWRITE: %q: both sides must be URLs (https://HOST/=http://127.0.0.1:PORT/)", shown)
		}
		rw.Add(from, to)
	}
	return rw, nil
}

// Add adds a rule.
func (rw *Rewrite) Add(from, to string) {
	rw.rules = append(rw.rules, rewriteRule{from, to})
}

// Apply rewrites u by the longest matching rule; u unchanged when none
// matches.
func (rw *Rewrite) Apply(u string) string {
	if rw == nil {
		return u
	}
	best := -1
	for i, r := range rw.rules {
		if strings.HasPrefix(u, r.from) && (best < 0 || len(r.from) > len(rw.rules[best].from)) {
			best = i
		}
	}
	if best < 0 {
		return u
	}
	return rw.rules[best].to + strings.TrimPrefix(u, rw.rules[best].from)
}
