package plugind

import "strings"

// IsCommitID reports whether s is a full commit id as every pin spells it
// (SPEC §6): 40 lower-case hex digits. Every source parse asks, so it is a
// byte check rather than a regexp match, which costs a microsecond.
func IsCommitID(s string) bool {
	return len(s) == 40 && strings.Trim(s, "0123456789abcdef") == ""
}
