package cache

import (
	"time"
)

// Verdict is whether a commit was found on one of its repository's
// branches or tags, and when that was checked.
type Verdict struct {
	Remote, SHA string
	Reachable   bool
	CheckedAt   time.Time
}
