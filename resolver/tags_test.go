package resolver

import (
	"strings"
	"testing"

	"reasonix.io/plugind/resolver/host"
)

// TestHighestReleaseTag picks tags as Claude Code does: NAME--vVERSION,
// the version read after leading "=" and "v" and only when it is a full
// semantic version (dep--v1.3 is no release), other plugins' tags and
// branches ignored, the highest version satisfying every range; a
// prerelease only for a range that asks for one.
func TestHighestReleaseTag(t *testing.T) {
	t.Parallel()
	sha := func(c string) string { return strings.Repeat(c, 40) }
	refs := &host.Refs{Commits: map[string]string{
		"HEAD": sha("0"), "main": sha("0"),
		"dep--v1.0.0": sha("1"), "dep--v1.2.0": sha("2"), "dep--v1.5.0": sha("3"), "dep--v2.0.0": sha("4"),
		"dep--v1.3": sha("5"), "dep--vv1.6.0": sha("6"), "dep--v3.0.0-rc.1": sha("7"), "dep--vbanana": sha("8"),
		"other--v1.9.0": sha("9"), "dep-extra--v1.8.0": sha("a"),
	}}
	tags, ignored := releaseTags(refs, "dep")
	var names []string
	for _, tg := range tags {
		names = append(names, tg.name)
	}
	if got := strings.Join(names, " "); got != "dep--v1.0.0 dep--v1.2.0 dep--v1.5.0 dep--vv1.6.0 dep--v2.0.0 dep--v3.0.0-rc.1" {
		t.Fatalf("release tags: %s", got)
	}
	if got := strings.Join(ignored, " "); got != "dep--v1.3 dep--vbanana" {
		t.Fatalf("ignored: %s", got)
	}
	tests := []struct {
		ranges []string
		want   string // "" when none satisfies
	}{
		{[]string{"^1.2"}, "dep--vv1.6.0"},
		{[]string{"~1.2.0"}, "dep--v1.2.0"},
		{[]string{">=1.0.0 <1.5.0"}, "dep--v1.2.0"},
		{[]string{"^1", "<1.5.0"}, "dep--v1.2.0"},
		{[]string{"^1 || ^2"}, "dep--v2.0.0"},
		{[]string{"^1 || ^2", "<2"}, "dep--vv1.6.0"},
		{[]string{"*"}, "dep--v2.0.0"},
		{[]string{">=3.0.0-rc.0"}, "dep--v3.0.0-rc.1"},
		{[]string{"^3"}, ""},
		{[]string{"^1", "^2"}, ""},
	}
	for _, tt := range tests {
		got, ok, err := highestSatisfying(tags, tt.ranges)
		if err != nil {
			t.Fatalf("%v: %v", tt.ranges, err)
		}
		if tt.want == "" && ok || tt.want != "" && got.name != tt.want {
			t.Errorf("%v: got %q (%v), want %q", tt.ranges, got.name, ok, tt.want)
		}
	}
	if _, _, err := highestSatisfying(tags, []string{"not a range"}); err == nil || !strings.Contains(err.Error(), `"not a range"`) {
		t.Errorf("a bad range: %v", err)
	}
	if got := describeTags(nil, nil); got != "none" {
		t.Errorf("describeTags(nil) = %q", got)
	}
	many := make([]releaseTag, 12)
	for i := range many {
		many[i].name = "t" + string(rune('a'+i))
	}
	if got := describeTags(many, nil); got != "ta, tb, tc, td, … (5 more), tj, tk, tl" {
		t.Errorf("describeTags(12) = %q", got)
	}
}
