package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func TestDependencies(t *testing.T) {
	t.Parallel()
	sha40 := strings.Repeat("a", 40)
	skill := map[string]string{"skills/s/SKILL.md": "---\ndescription: s\n---\n"}
	withManifest := func(deps string) map[string]string {
		files := map[string]string{".claude-plugin/plugin.json": `{"name":"p","dependencies":` + deps + `}`}
		for k, v := range skill {
			files[k] = v
		}
		return files
	}
	tests := []struct {
		name    string
		deps    string
		want    []Dependency
		wantErr []string
	}{
		{name: "bare names", deps: `["a", "b.c_d-e"]`, want: []Dependency{{Name: "a"}, {Name: "b.c_d-e"}}},
		{name: "qualified", deps: `["a@other"]`, want: []Dependency{{Name: "a", Marketplace: "other"}}},
		{name: "caret range", deps: `["a@^1.2", "b@m@^2.0.0"]`, want: []Dependency{{Name: "a", Version: "^1.2"}, {Name: "b", Marketplace: "m", Version: "^2.0.0"}}},
		{name: "objects", deps: `[{"name":"a","version":"~2.1.0"},{"name":"b","marketplace":"m","extra":1}]`,
			want: []Dependency{{Name: "a", Version: "~2.1.0"}, {Name: "b", Marketplace: "m"}}},
		{name: "repeats merge", deps: `["a", {"name":"a","version":">=1"}, "a@^1.5"]`, want: []Dependency{{Name: "a", Version: ">=1, ^1.5"}}},
		{name: "sha", deps: `[{"name":"a","sha":"` + sha40 + `"},{"name":"b","version":"^1","sha":"` + sha40 + `"}]`,
			want: []Dependency{{Name: "a", SHA: sha40}, {Name: "b", Version: "^1", SHA: sha40}}},
		{name: "repeats share a sha", deps: `["a", {"name":"a","sha":"` + sha40 + `"}]`, want: []Dependency{{Name: "a", SHA: sha40}}},
		{name: "short sha", deps: `[{"name":"a","sha":"88d1eae"}]`, wantErr: []string{"dependencies[0].sha", `"88d1eae"`, "40 lowercase hex"}},
		{name: "sha not a string", deps: `[{"name":"a","sha":1}]`, wantErr: []string{"dependencies[0].sha", "number"}},
		{name: "two shas", deps: `[{"name":"a","sha":"` + sha40 + `"},{"name":"a","sha":"` + strings.Repeat("b", 40) + `"}]`,
			wantErr: []string{"dependencies[1].sha", "pins a to bbbbbbbbbbbb", "aaaaaaaaaaaa"}},
		{name: "empty", deps: `[]`},
		{name: "null", deps: `null`, wantErr: []string{"dependencies", "null"}}, // Claude refuses a null optional field
		{name: "npm object", deps: `{"openbb":"latest"}`, wantErr: []string{"dependencies", "npm", "package.json"}},
		{name: "number item", deps: `[1]`, wantErr: []string{"dependencies[0]", "number"}},
		{name: "bad name", deps: `["../x"]`, wantErr: []string{"dependencies[0]", `"../x"`, "must be a plugin name"}},
		{name: "empty marketplace", deps: `["a@"]`, wantErr: []string{"dependencies[0]", "NAME@MARKETPLACE"}},
		{name: "too many parts", deps: `["a@m@n"]`, wantErr: []string{"dependencies[0]", "NAME@MARKETPLACE"}},
		{name: "bad range", deps: `[{"name":"a","version":"not a range"}]`, wantErr: []string{"dependencies[0]", "not a semantic version range"}},
		{name: "object without name", deps: `[{"version":"1"}]`, wantErr: []string{"dependencies[0].name", "required"}},
		{name: "name not a string", deps: `[{"name":3}]`, wantErr: []string{"dependencies[0].name", "number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := layout(t, withManifest(tt.deps), nil)
			pkg, err := Load(root, LoadOptions{})
			if tt.wantErr != nil {
				wantError(t, err, append([]string{ClaudeManifest}, tt.wantErr...)...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pkg.Dependencies, tt.want) {
				t.Fatalf("dependencies = %+v, want %+v", pkg.Dependencies, tt.want)
			}
			if pkg.Compatibility != CompatFull {
				t.Fatalf("dependencies lowered compatibility to %s: %v", pkg.Compatibility, pkg.Warnings)
			}
		})
	}
}

// TestEntryDependencies: an entry's dependencies join those of the
// plugin.json beside it; without one, the entry's are the plugin's.
func TestEntryDependencies(t *testing.T) {
	t.Parallel()
	root := layout(t, map[string]string{
		".claude-plugin/plugin.json": `{"name":"p","dependencies":["a"]}`,
		"skills/s/SKILL.md":          "---\ndescription: s\n---\n",
	}, nil)
	bare := layout(t, map[string]string{"skills/s/SKILL.md": "---\ndescription: s\n---\n"}, nil)
	tests := []struct {
		name  string
		root  string
		entry EntryManifest
		want  []Dependency
	}{
		{"strict union", root, EntryManifest{Doc: []byte(`{"dependencies":["b", "a"]}`), Strict: true}, []Dependency{{Name: "a"}, {Name: "b"}}},
		{"strict without", root, EntryManifest{Doc: []byte(`{}`), Strict: true}, []Dependency{{Name: "a"}}},
		{"not strict beside plugin.json", root, EntryManifest{Doc: []byte(`{"dependencies":["c@m"]}`), Strict: false}, []Dependency{{Name: "a"}, {Name: "c", Marketplace: "m"}}},
		{"not strict, no plugin.json", bare, EntryManifest{Doc: []byte(`{"dependencies":["c@m"],"skills":["./skills/s"]}`), Strict: false}, []Dependency{{Name: "c", Marketplace: "m"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			entry := tt.entry
			pkg, err := Load(tt.root, LoadOptions{Name: "p", Entry: &entry})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pkg.Dependencies, tt.want) {
				t.Fatalf("dependencies = %+v, want %+v", pkg.Dependencies, tt.want)
			}
		})
	}
}

func TestDependencyAllows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rng, version string
		want         bool
	}{
		{"", "", true},
		{"", "whatever", true},
		{"^1.2", "1.4.0", true},
		{"^1.2", "2.0.0", false},
		{"~2.1.0", "2.1.9", true},
		{"~2.1.0", "2.2.0", false},
		{">=1, ^1.5", "1.4.0", false},
		{"^1", "", false},
		{"^1", "one", false},
	}
	for _, tt := range tests {
		if got := (Dependency{Name: "x", Version: tt.rng}).Allows(tt.version); got != tt.want {
			t.Errorf("%q allows %q = %v, want %v", tt.rng, tt.version, got, tt.want)
		}
	}
}
