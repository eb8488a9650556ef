package source

import (
	"net/url"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/secrets"
)

// ParseSubmoduleURL reads the URL a .gitmodules file gives for a submodule
// of parent. It is outside input like any source: an absolute URL is read
// as a marketplace entry's repository URL (ParseRepoURL: https or SSH;
// nothing else, no credentials), and a
// relative one ("../tools.git", "./sub") is resolved against the parent's
// repository URL as git resolves it, then read the same way.
func ParseSubmoduleURL(parent Source, raw string) (Source, error) {
	if !strings.HasPrefix(raw, "./") && !strings.HasPrefix(raw, "../") {
		return ParseRepoURL(raw, false)
	}
	base, err := url.Parse(parent.URL())
	if err != nil || !parent.IsRemote() {
		return Source{}, invalid(raw, "a relative submodule URL needs a remote parent repository (got %s)", parent)
	}
	segs := strings.Split(strings.Trim(base.Path, "/"), "/")
	rest := raw
	for {
		switch {
		case strings.HasPrefix(rest, "./"):
			rest = rest[2:]
			continue
		case strings.HasPrefix(rest, "../"):
			if len(segs) == 0 {
				return Source{}, plugind.Errorf(plugind.CodeInvalidSource, "submodule URL %q climbs above the host of %s", secrets.Mask(raw), parent.Key())
			}
			segs, rest = segs[:len(segs)-1], rest[3:]
			continue
		}
		break
	}
	authority := base.Host
	if base.User != nil { // an SSH parent's user
		authority = base.User.String() + "@" + authority
	}
	resolved := base.Scheme + "://" + authority + "/" + strings.Join(append(segs, rest), "/")
	s, err := ParseRepoURL(resolved, false)
	if err != nil {
		return Source{}, plugind.Errorf(plugind.CodeInvalidSource, "submodule URL %q (relative to %s): %s", secrets.Mask(raw), parent.Key(), trimSourcePrefix(err))
	}
	return s, nil
}
