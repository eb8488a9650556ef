package source

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// isLabel reports whether l is a DNS label as a source spells it:
// ^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$ (a byte check: every source parse
// checks its host, and a regexp match costs a microsecond).
func isLabel(l string) bool {
	return len(l) >= 1 && len(l) <= 63 && l[0] != '-' && l[len(l)-1] != '-' &&
		!strings.ContainsFunc(l, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' })
}

// NormalizeHost returns a host name the one way sources spell it: through
// IDNA's lookup profile (lower case, width and compatibility forms folded,
// Unicode labels turned into "xn--" punycode), then checked as the DNS name
// of a real host (checkHost). Everything that compares hosts — source keys,
// the team mirror's policy rules — goes through it, so "Bücher.example",
// "bücher.example" and "xn--bcher-kva.example" are one host everywhere.
func NormalizeHost(h string) (string, error) {
	if h == GitHubHost { // most sources' host, and its own normal form (TestGitHubHostIsNormal)
		return h, nil
	}
	if net.ParseIP(strings.TrimFunc(h, func(r rune) bool { return r == '[' || r == ']' })) != nil {
		return "", fmt.Errorf("host %q is an IP address; name the host", h)
	}
	if !utf8.ValidString(h) {
		return "", fmt.Errorf("host %q is not UTF-8 text", h)
	}
	ascii, err := idna.Lookup.ToASCII(h)
	if err == nil && ascii != h {
		// The spelling must be a fixed point, so a key parses back to
		// itself (IDNA turns some input, such as U+FFFD, into labels it
		// then refuses to read); a name it left as it was is one.
		var again string
		if again, err = idna.Lookup.ToASCII(ascii); err == nil && again != ascii {
			err = fmt.Errorf("%q is not stable", ascii)
		}
	}
	if err != nil {
		return "", fmt.Errorf("host %q is not a valid host name (%v)", h, err)
	}
	if err := checkHost(ascii); err != nil {
		return "", err
	}
	return ascii, nil
}

// checkHost accepts DNS names of real hosts, in their ASCII form. IP
// literals, "localhost" and single-label names are refused: a marketplace
// entry must not be able to point this machine at its own network.
func checkHost(host string) error {
	switch {
	case host == "":
		return fmt.Errorf("no host")
	case net.ParseIP(strings.Trim(host, "[]")) != nil:
		return fmt.Errorf("host %q is an IP address; name the host", host)
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return fmt.Errorf("host %q is this machine", host)
	case !strings.Contains(host, "."):
		return fmt.Errorf("host %q is not a fully qualified name", host)
	case len(host) > 253:
		return fmt.Errorf("host name is too long")
	}
	if slices.ContainsFunc(strings.Split(host, "."), func(l string) bool { return !isLabel(l) }) {
		return fmt.Errorf("host %q is not a valid host name", host)
	}
	return nil
}

// CheckSegment reports whether seg can be one segment of a source's
// repository path (what Key returns after the host): letters, digits and
// . _ ~ + -, not starting with '-', and not "." or "..".
func CheckSegment(seg string) error {
	switch {
	case seg == "" || seg == "." || seg == "..":
		return fmt.Errorf("segment %q is empty, \".\" or \"..\"", seg)
	case !segmentRE.MatchString(seg) || strings.HasPrefix(seg, "-"):
		return fmt.Errorf("segment %q: use letters, digits and . _ ~ + - (not starting with '-')", seg)
	}
	return nil
}
