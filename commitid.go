package plugind

import "reasonix.io/plugind/internal/lazyregexp"

// commitID is a full commit id as every pin spells it (SPEC §6): 40
// lower-case hex digits.
var commitID = lazyregexp.New(`^[0-9a-f]{40}$`)

// IsCommitID reports whether s is a full 40-hex lower-case commit id.
func IsCommitID(s string) bool { return commitID.MatchString(s) }
