package lockfile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/source"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const (
	commitA = "1111111111111111111111111111111111111111"
	commitB = "2222222222222222222222222222222222222222"
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

func mustSource(t *testing.T, raw string) source.Source {
	t.Helper()
	s, err := source.ParseRecorded(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sample is a lock given out of order, as a home might list it.
func sample(t *testing.T) *Lock {
	return &Lock{
		Version: Version,
		Marketplaces: []Marketplace{
			{Name: "zeta", Source: mustSource(t, "https://git.example.test/team/zeta.git"), Subdir: "market", Commit: commitB},
			{Name: "acme", Source: mustSource(t, "https://github.com/acme/market"), Commit: commitA},
		},
		Plugins: []Plugin{
			{Name: "lint", Marketplace: "zeta", Source: mustSource(t, "https://git.example.test/team/zeta.git#"+commitB), Commit: commitB, Subdir: "plugins/lint", ContentDigest: digestA},
			{Name: "fmt", Marketplace: "acme", Source: mustSource(t, "https://github.com/acme/market/tree/"+commitA+"/plugins/fmt"), Commit: commitA, ContentDigest: digestA, Enabled: true,
				Config: map[string]manifest.Value{"width": manifest.NumberValue(80), "style": manifest.StringValue("tight")}},
			{Name: "solo", Source: mustSource(t, "https://github.com/o/solo/tree/"+commitB), Commit: commitB, ContentDigest: digestA, Enabled: true, Dependency: true},
		},
	}
}

// TestMarshalGolden: a lock is written sorted (lists by name, maps by
// key), fields in their fixed order, two-space indented with a newline,
// and reads back as itself.
func TestMarshalGolden(t *testing.T) {
	data, err := sample(t).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "sample.lock.json")
	if *update {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("marshalled:\n%s\nwant (%s):\n%s", data, golden, want)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatalf("the written lock does not parse: %v", err)
	}
	again, err := back.Marshal()
	if err != nil || !bytes.Equal(again, data) {
		t.Fatalf("written again (%v):\n%s", err, again)
	}
}

// TestParseRefuses: every malformed lock is refused with its reason, as
// install.invalid_source, quoting at most a clipped part of what it got
// and masking credentials.
func TestParseRefuses(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "sample.lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) string {
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("golden has no %q", old)
		}
		return strings.Replace(string(good), old, new, 1)
	}
	for _, tc := range []struct {
		name, doc, want string
		not             string // must not appear in the error
	}{
		{"newer version", edit(`"version": 1`, `"version": 2`), "written by a newer reasonix", ""},
		{"newer version with new fields", `{"version": 7, "teams": []}`, "written by a newer reasonix", ""},
		{"version zero", edit(`"version": 1`, `"version": 0`), "is not a version", ""},
		{"no version", `{"plugins": []}`, `no "version"`, ""},
		{"not JSON", `{"version": 1,`, "not a lock", ""},
		{"two documents", string(good) + `{}`, "after top-level value", ""},
		{"unknown field", edit(`"version": 1`, `"version": 1, "extra": 1`), `unknown field "extra"`, ""},
		{"unknown plugin field", edit(`"name": "fmt",`, `"name": "fmt", "sha": "x",`), `unknown field "sha"`, ""},
		{"repeated key", edit(`"name": "fmt",`, `"name": "fmt", "name": "lint",`), `"name" is given twice`, ""},
		{"duplicate plugin", edit(`"name": "lint"`, `"name": "fmt"`), `two plugins are named "fmt"`, ""},
		{"duplicate marketplace", edit(`"name": "zeta"`, `"name": "acme"`), `two marketplaces are named "acme"`, ""},
		{"missing marketplace", edit(`"marketplace": "zeta"`, `"marketplace": "nowhere"`), `names marketplace "nowhere", which the lock does not list`, ""},
		{"short commit", edit(`"commit": "`+commitB+`",
      "subdir": "plugins/lint"`, `"commit": "2222",
      "subdir": "plugins/lint"`), `commit "2222" is not a commit`, ""},
		{"upper-case commit", edit(`"commit": "`+commitA+`"
    }`, `"commit": "`+strings.ToUpper("abcdefabcdefabcdefabcdefabcdefabcdefabcd")+`"
    }`), "is not a commit", ""},
		{"digest without algorithm", edit(`"contentDigest": "`+digestA+`",
      "enabled": true,
      "config"`, `"contentDigest": "aaaa",
      "enabled": true,
      "config"`), `contentDigest "aaaa" is not a digest`, ""},
		{"subdir leaving the repository", edit(`"subdir": "plugins/lint"`, `"subdir": "../../etc"`), `contains a ".." segment`, ""},
		{"absolute subdir", edit(`"subdir": "plugins/lint"`, `"subdir": "/etc"`), "absolute path", ""},
		{"unclean subdir", edit(`"subdir": "plugins/lint"`, `"subdir": "plugins//lint/"`), "not a clean relative folder", ""},
		{"plugin name with a slash", edit(`"name": "solo"`, `"name": "../solo"`), "contains \"..\"", ""},
		{"plugin name with a space", edit(`"name": "solo"`, `"name": "so lo"`), "is not allowed", ""},
		{"local source", edit(`"source": "https://github.com/o/solo/tree/`+commitB+`"`, `"source": "/home/me/solo"`), "a lock holds remote repositories only", ""},
		{"no source", edit(`"source": "https://github.com/o/solo/tree/`+commitB+`",`, ``), "has no source", ""},
		{"source with a password", edit(`"source": "https://github.com/o/solo/tree/`+commitB+`"`, `"source": "https://bob:hunter2secret@git.example.test/o/solo.git"`), "git.example.test", "hunter2secret"},
		{"config key not an option key", edit(`"style": "tight"`, `"st-yle": "tight"`), "is not an option key", ""},
		{"huge", `{"version": 1, "plugins": [` + strings.Repeat(" ", MaxBytes) + `]}`, "the limit is", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil {
				t.Fatalf("parsed; want a refusal with %q", tc.want)
			}
			if plugind.CodeOf(err) != plugind.CodeInvalidSource || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v [%s], want %q", err, plugind.CodeOf(err), tc.want)
			}
			if tc.not != "" && strings.Contains(err.Error(), tc.not) {
				t.Fatalf("error %v shows %q", err, tc.not)
			}
			if len(err.Error()) > 600 {
				t.Fatalf("error is %d bytes long", len(err.Error()))
			}
		})
	}
}

// TestParseAccepts: what a hand-written lock may leave out (commits,
// digests, subfolders, config) it may; Frozen is the caller's to refuse.
func TestParseAccepts(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"empty", `{"version": 1}`},
		{"empty lists", `{"version": 1, "marketplaces": [], "plugins": []}`},
		{"unpinned", `{"version": 1, "marketplaces": [{"name": "acme", "source": "https://github.com/acme/market"}],
			"plugins": [{"name": "fmt", "marketplace": "acme", "source": "https://github.com/acme/market", "enabled": true}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Parse([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range l.Plugins {
				if p.Pinned() {
					t.Fatalf("%s is pinned", p.Name)
				}
			}
		})
	}
}

// TestCheckLimits: a lock built in memory is checked as a parsed one is
// (Marshal refuses to write what would not read back).
func TestCheckLimits(t *testing.T) {
	l := &Lock{Version: Version}
	for i := range MaxPlugins + 1 {
		l.Plugins = append(l.Plugins, Plugin{Name: "p" + strings.Repeat("x", i%10) + string(rune('a'+i%26)), Source: mustSource(t, "https://github.com/o/r")})
	}
	if _, err := l.Marshal(); err == nil || !strings.Contains(err.Error(), "the limit is") {
		t.Fatalf("marshal of %d plugins: %v", len(l.Plugins), err)
	}
}
