package secrets

import (
	"strings"

	"reasonix.io/plugind/internal/lazyregexp"
)

// knownToken returns the end of the well-known credential token starting
// at i, and the environment variable such a token is conventionally kept
// in; end is i when none starts there.
func knownToken(s string, i int) (end int, env string) {
	for _, ti := range tokensByFirstByte[s[i]] {
		t := &knownTokens[ti]
		if !strings.HasPrefix(s[i:], t.prefix) {
			continue
		}
		p := i + len(t.prefix)
		e := runEnd(s, p, t.class)
		if e < len(s) && isTokenByte(s[e]) {
			continue // the word goes on: not this token's shape
		}
		// Short random tokens nearly always hold a digit; asking for one
		// keeps words like "sk-learn" out.
		if rest := s[p:e]; len(rest) >= t.min && (t.max == 0 || len(rest) <= t.max) && (len(rest) >= 20 || hasDigit(rest)) {
			return e, t.env
		}
	}
	if s[i] == 'e' && strings.HasPrefix(s[i:], "eyJ") {
		if m := jwtPattern.FindStringIndex(s[i:]); m != nil && (i+m[1] == len(s) || !isTokenByte(s[i+m[1]])) {
			return i + m[1], "JWT"
		}
	}
	return i, ""
}

// knownTokens are credential formats recognized whatever key they sit under.
// Longer prefixes come before their own prefixes (sk-ant- before sk-).
var knownTokens = []struct {
	prefix   string
	env      string // where such a token is conventionally kept
	class    func(byte) bool
	min, max int // length after the prefix; max 0 is unbounded
}{
	{"ghp_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"gho_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"ghu_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"ghs_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"ghr_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"github_pat_", "GITHUB_TOKEN", isWordByte, 20, 0},
	{"glpat-", "GITLAB_TOKEN", isTokenByte, 20, 0},
	{"sk-ant-", "ANTHROPIC_API_KEY", isTokenByte, 20, 0},
	{"sk-", "OPENAI_API_KEY", isTokenByte, 8, 0},
	{"sk_live_", "STRIPE_SECRET_KEY", isAlnum, 16, 0},
	{"sk_test_", "STRIPE_SECRET_KEY", isAlnum, 16, 0},
	{"rk_live_", "STRIPE_SECRET_KEY", isAlnum, 16, 0},
	{"rk_test_", "STRIPE_SECRET_KEY", isAlnum, 16, 0},
	{"xoxb-", "SLACK_BOT_TOKEN", isTokenByte, 10, 0},
	{"xoxp-", "SLACK_USER_TOKEN", isTokenByte, 10, 0},
	{"xoxa-", "SLACK_TOKEN", isTokenByte, 10, 0},
	{"xoxr-", "SLACK_TOKEN", isTokenByte, 10, 0},
	{"xoxs-", "SLACK_TOKEN", isTokenByte, 10, 0},
	{"AKIA", "AWS_ACCESS_KEY_ID", isUpperDigit, 16, 16},
	{"ASIA", "AWS_ACCESS_KEY_ID", isUpperDigit, 16, 16},
	{"AIza", "GOOGLE_API_KEY", isTokenByte, 35, 35},
	{"npm_", "NPM_TOKEN", isAlnum, 30, 0},
	{"hf_", "HF_TOKEN", isAlnum, 30, 0},
	// The team mirror's own client tokens (mirror/meta.TokenPrefix, 32
	// random bytes in unpadded base64url).
	{"rxm_", "REASONIX_MIRROR_TOKEN", isTokenByte, 43, 43},
}

// tokensByFirstByte indexes knownTokens by the first byte of their prefix,
// so the scan looks at no format that cannot start where it is.
var tokensByFirstByte = func() (idx [256][]int) {
	for i, t := range knownTokens {
		idx[t.prefix[0]] = append(idx[t.prefix[0]], i)
	}
	return idx
}()

var jwtPattern = lazyregexp.New(`^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)
