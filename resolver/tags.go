package resolver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"reasonix.io/plugind"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver/host"
)

// Constraint narrows which commit of a marketplace entry a plan takes
// (SPEC §7: a dependency's range or sha). Ranges are resolved as Claude
// Code resolves them: to the highest release tag NAME--vVERSION of the
// entry's repository (the one `claude plugin tag` creates) whose version
// satisfies every range, pinned to the commit the tag points at. A SHA
// wins over the ranges: the entry is pinned to that commit, which must be
// on a branch or tag like every sha pin (SPEC §6).
type Constraint struct {
	Ranges []string
	SHA    string
	// KeepPin: when no release tag satisfies the ranges, the entry keeps
	// its own pin (TagMiss says so) instead of being refused, as Claude
	// Code's update falls back to the entry and then checks its version.
	KeepPin bool
}

// tagSeparator joins a plugin's name and version in its release tags.
const tagSeparator = "--v"

// releaseTag is one NAME--vVERSION tag.
type releaseTag struct {
	name    string
	version *semver.Version
	sha     string
}

// releaseTags lists the release tags of plugin among refs, lowest version
// first. Like Claude Code (node-semver's clean), a version is read after
// dropping leading "=" and "v"; one that is not a full semantic version
// (plugin--v1.3) is no release and is returned in ignored.
func releaseTags(refs *host.Refs, plugin string) (tags []releaseTag, ignored []string) {
	prefix := plugin + tagSeparator
	for name, sha := range refs.Commits {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		v, err := semver.StrictNewVersion(strings.TrimLeft(strings.TrimSpace(rest), "=v"))
		if err != nil {
			ignored = append(ignored, name)
			continue
		}
		tags = append(tags, releaseTag{name: name, version: v, sha: sha})
	}
	slices.SortFunc(tags, func(a, b releaseTag) int {
		return cmp.Or(a.version.Compare(b.version), strings.Compare(a.name, b.name))
	})
	sort.Strings(ignored)
	return tags, ignored
}

// highestSatisfying is the release tag of the highest version that
// satisfies every range (node-semver's maxSatisfying over the intersection
// of the ranges Claude Code computes); ok is false when none does.
func highestSatisfying(tags []releaseTag, ranges []string) (releaseTag, bool, error) {
	cs := make([]*semver.Constraints, 0, len(ranges))
	for _, r := range ranges {
		c, err := semver.NewConstraint(r)
		if err != nil {
			return releaseTag{}, false, fmt.Errorf("version %q is not a semantic version range: %w", r, err)
		}
		cs = append(cs, c)
	}
	for i := len(tags) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(cs, func(c *semver.Constraints) bool { return !c.Check(tags[i].version) }) {
			return tags[i], true, nil
		}
	}
	return releaseTag{}, false, nil
}

// describeTags lists tag names for a message, eliding the middle of a
// long list.
func describeTags(tags []releaseTag, ignored []string) string {
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.name
	}
	s := "none"
	if len(names) > 0 {
		s = elide(names)
	}
	if len(ignored) > 0 {
		s += "; not semantic versions, so not releases: " + elide(ignored)
	}
	return s
}

func elide(names []string) string {
	const head, tail = 4, 3
	if len(names) <= head+tail+1 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, … (%d more), %s", strings.Join(names[:head], ", "), len(names)-head-tail, strings.Join(names[len(names)-tail:], ", "))
}

// pinConstraints applies req.Constraints to the entries they name, before
// any ref is resolved: a sha pins the entry (to be proven reachable); a
// range lists its repository's refs (each repository once; offline, the
// refs the cache remembers) and pins the entry to the highest matching
// release tag. The entry's repository is its own, or for a relative entry
// the marketplace's, read at the tag's commit as Claude Code reads it. A
// relative entry whose repository has no matching tag stays at the
// marketplace's commit, as in Claude Code, with TagMiss saying so; an
// entry with a repository of its own is refused.
func (s *resolve) pinConstraints(ctx context.Context, req Request, plans []*entryPlan) {
	if len(req.Constraints) == 0 {
		return
	}
	byRepo := map[string]host.Repo{}
	var ranged []*entryPlan
	for _, ep := range plans {
		c, ok := req.Constraints[ep.entry.Name]
		if !ok || ep.cand.Err != nil {
			continue
		}
		switch {
		case ep.repo == nil && c.SHA != "":
			ep.cand.Err = plugind.Errorf(plugind.CodeNotPinnable, "plugin %q is pinned to commit %s by a dependency, but it is a folder of a local marketplace, which has no commits", ep.entry.Name, host.Short(c.SHA))
		case ep.repo == nil && len(c.Ranges) > 0:
			ep.cand.TagMiss = "it is a folder of a local marketplace, which has no release tags"
		case c.SHA != "":
			ep.sha, ep.ref, ep.verify = c.SHA, "", true
		case len(c.Ranges) > 0:
			byRepo[ep.repo.Source().Key()] = ep.repo
			ranged = append(ranged, ep)
		}
	}
	if len(ranged) == 0 {
		return
	}
	refs, errs := eachAtOnce(ctx, s, byRepo, func(ctx context.Context, _ string, repo host.Repo) (*host.Refs, error) {
		return repo.Refs(ctx)
	})
	for _, ep := range ranged {
		name, key := ep.entry.Name, ep.repo.Source().Key()
		ranges := req.Constraints[name].Ranges
		if err := errs[key]; err != nil {
			// A range that cannot be checked is not guessed at: online and
			// offline plans of the same inputs must agree.
			ep.cand.Err = fmt.Errorf("plugin %q: the release tags of %s (for %s) cannot be listed: %w", name, key, strings.Join(ranges, ", "), err)
			continue
		}
		tags, ignored := releaseTags(refs[key], name)
		tag, ok, err := highestSatisfying(tags, ranges)
		switch {
		case err != nil:
			ep.cand.Err = plugind.Errorf(plugind.CodeInvalidSource, "plugin %q: %v", name, err)
		case ok:
			ep.sha, ep.ref, ep.verify = tag.sha, "", false // a tag's commit is on a tag
			ep.cand.Tag, ep.cand.TagVersion = tag.name, tag.version.String()
		default:
			miss := fmt.Sprintf("no release tag %s%s* of %s satisfies %s (tags found: %s)", name, tagSeparator, key, strings.Join(ranges, ", "), describeTags(tags, ignored))
			if ep.entry.Kind == marketplace.KindRelative || req.Constraints[name].KeepPin {
				ep.cand.TagMiss = miss
			} else {
				ep.cand.Err = plugind.Errorf(plugind.CodeNotFound, "plugin %q: %s", name, miss)
			}
		}
	}
}
