package host

import (
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// ChecksumLogEnv names the variable that points a client at a checksum
// log (SPEC §4, §17).
const ChecksumLogEnv = "REASONIX_CHECKSUM_LOG"

// ChecksumLogTarget is where a client's checksum log is and how its tree
// heads are verified: REASONIX_CHECKSUM_LOG="<verifier key> <URL>".
type ChecksumLogTarget struct {
	// VerifierKey is the note verifier key "NAME+HASH+KEY" that
	// reasonix mirror log-key create printed.
	VerifierKey string
	// Verifier checks the log's signed tree heads.
	Verifier note.Verifier
	// URL is the log's base: the protocol's paths (/latest, /lookup/…,
	// /tile/…) are appended to it. https, or http on a loopback address.
	URL *url.URL
}

// Name is the log's name, from its key: the sumdb client's name for it,
// under which its cached tiles and latest tree head are kept.
func (c *ChecksumLogTarget) Name() string { return c.Verifier.Name() }

// ParseChecksumLog reads the variable's value. "" means no log: (nil, nil).
// The error names what is wrong; the value holds no secret (a verifier
// key is public), but a URL's userinfo is refused and never echoed.
func ParseChecksumLog(v string) (*ChecksumLogTarget, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	f := strings.Fields(v)
	if len(f) != 2 {
		return nil, fmt.Errorf("%s: want \"<verifier key> <URL>\" (two fields separated by a space), got %d fields", ChecksumLogEnv, len(f))
	}
	ver, err := note.NewVerifier(f[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a verifier key (reasonix mirror log-key create prints one): %v", ChecksumLogEnv, f[0], err)
	}
	u, err := url.Parse(f[1])
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%s: %q is not an http(s) URL", ChecksumLogEnv, f[1])
	}
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("%s: the log's URL must not carry credentials (%s://***@%s)", ChecksumLogEnv, u.Scheme, u.Host)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%s: the log's URL %s://%s%s has a query or fragment", ChecksumLogEnv, u.Scheme, u.Host, u.Path)
	case u.Scheme == "https":
	case u.Scheme == "http" && IsLoopbackHost(u.Host):
	default:
		return nil, fmt.Errorf("%s: the log's URL must be https (http only on a loopback address), got %s://%s", ChecksumLogEnv, u.Scheme, u.Host)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return &ChecksumLogTarget{VerifierKey: f[0], Verifier: ver, URL: u}, nil
}
