package host

import "errors"

// Not-found answers are remembered (in the cache, in the team mirror's
// database) and sent over the mirror's API by kind: a word per sentinel.
// KindOf and SentinelOf are the one mapping both ways, so an answer keeps
// its meaning — errors.Is still holds — wherever it was stored or sent.

// KindCommitOrUnreachable is a commit a host would not serve and no branch
// or tag reaches, on a host that does not say whether it exists at all.
const KindCommitOrUnreachable = "commit-or-unreachable"

// KindOf names the missing thing err reports ("repo", "ref", "commit",
// "unreachable", KindCommitOrUnreachable, "path"); "" when err is not a
// not-found.
func KindOf(err error) string {
	switch {
	case errors.Is(err, ErrCommitNotFound) && errors.Is(err, ErrUnreachable):
		return KindCommitOrUnreachable
	case errors.Is(err, ErrRepoNotFound):
		return "repo"
	case errors.Is(err, ErrRefNotFound):
		return "ref"
	case errors.Is(err, ErrCommitNotFound):
		return "commit"
	case errors.Is(err, ErrUnreachable):
		return "unreachable"
	case errors.Is(err, ErrPathNotFound):
		return "path"
	}
	return ""
}

// SentinelOf is the sentinel (or pair of them) a kind stands for; nil for a
// word that is not a not-found kind.
func SentinelOf(kind string) error {
	switch kind {
	case "repo":
		return ErrRepoNotFound
	case "ref":
		return ErrRefNotFound
	case "commit":
		return ErrCommitNotFound
	case "unreachable":
		return ErrUnreachable
	case KindCommitOrUnreachable:
		return errors.Join(ErrUnreachable, ErrCommitNotFound)
	case "path":
		return ErrPathNotFound
	}
	return nil
}
