package host

import (
	"errors"
	"slices"
)

// Not-found answers are remembered (in the cache, in the team mirror's
// database) and sent over the mirror's API by kind: a word per sentinel.
// KindOf and SentinelOf are the one mapping both ways, so an answer keeps
// its meaning — errors.Is still holds — wherever it was stored or sent.

// KindCommitOrUnreachable is a commit a host would not serve and no branch
// or tag reaches, on a host that does not say whether it exists at all.
const KindCommitOrUnreachable = "commit-or-unreachable"

// notFoundKinds pairs each kind with the sentinels an error of it wraps, in
// the order KindOf tries them (the pair before either alone).
var notFoundKinds = []struct {
	kind      string
	sentinels []error
}{
	{KindCommitOrUnreachable, []error{ErrUnreachable, ErrCommitNotFound}},
	{"repo", []error{ErrRepoNotFound}},
	{"ref", []error{ErrRefNotFound}},
	{"commit", []error{ErrCommitNotFound}},
	{"unreachable", []error{ErrUnreachable}},
	{"path", []error{ErrPathNotFound}},
}

// KindOf names the missing thing err reports ("repo", "ref", "commit",
// "unreachable", KindCommitOrUnreachable, "path"); "" when err is not a
// not-found.
func KindOf(err error) string {
	for _, k := range notFoundKinds {
		if !slices.ContainsFunc(k.sentinels, func(s error) bool { return !errors.Is(err, s) }) {
			return k.kind
		}
	}
	return ""
}

// SentinelOf is the sentinel (or pair of them) a kind stands for; nil for a
// word that is not a not-found kind.
func SentinelOf(kind string) error {
	for _, k := range notFoundKinds {
		switch {
		case k.kind != kind:
		case len(k.sentinels) == 1:
			return k.sentinels[0]
		default:
			return errors.Join(k.sentinels...)
		}
	}
	return nil
}
