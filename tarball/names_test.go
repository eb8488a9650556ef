package tarball

import (
	"strings"
	"testing"
)

func TestCleanName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		isDir bool
		want  string // "" means refused
		why   string
	}{
		{"a/b.txt", false, "a/b.txt", ""},
		{"./a//b.txt", false, "a/b.txt", ""},
		{"a/./b", false, "a/b", ""},
		{"dir/", true, "dir", ""},
		{"dir//", true, "dir", ""},
		{"./", true, ".", ""},
		{".", true, ".", ""},
		{"", false, "", "empty"},
		{"a\x00b", false, "", "NUL"},
		{`a\b`, false, "", "backslash"},
		{"/abs", false, "", "absolute"},
		{"//abs", true, "", "absolute"},
		{"C:/x", false, "", "drive letter"},
		{"c:x", false, "", "drive letter"},
		{"..", true, "", `".."`},
		{"../x", false, "", `".."`},
		{"a/../b", false, "", `".."`},
		{"a/..", true, "", `".."`},
		{"file/", false, "", "ends in"},
		{".", false, "", "not a local path"},
	}
	for _, tc := range tests {
		got, err := cleanName(tc.name, tc.isDir)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("cleanName(%q) = %q, want refused (%s)", tc.name, got, tc.why)
		case tc.want == "" && !strings.Contains(err.Error(), tc.why):
			t.Errorf("cleanName(%q) error %q does not say %q", tc.name, err, tc.why)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("cleanName(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestFoldKey(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{"README.md", "readme.MD"},
		{"\u212a", "k"},        // Kelvin sign
		{"ſ", "S"},             // long s
		{"Straße", "STRAßE"},   // ß has no simple upper-case pair but the rest folds
		{"Ωmega/ä", "ωMEGA/Ä"}, //
		{"ǅ", "ǆ"},             // title case
	}
	for _, p := range same {
		if foldKey(p[0]) != foldKey(p[1]) {
			t.Errorf("foldKey(%q) != foldKey(%q)", p[0], p[1])
		}
		if !strings.EqualFold(p[0], p[1]) {
			t.Errorf("test pair %q/%q is not EqualFold", p[0], p[1])
		}
	}
	differ := [][2]string{{"a", "b"}, {"ß", "ss"}, {"a/b", "a_b"}}
	for _, p := range differ {
		if foldKey(p[0]) == foldKey(p[1]) {
			t.Errorf("foldKey(%q) == foldKey(%q)", p[0], p[1])
		}
	}
}

func TestPathSet(t *testing.T) {
	t.Parallel()
	type add struct {
		p    string
		k    kind
		want string // "" means accepted
	}
	tests := []struct {
		name string
		adds []add
	}{
		{"implicit then explicit dir", []add{{"a/b", kindFile, ""}, {"a", kindDir, ""}}},
		{"explicit dir twice", []add{{"a", kindDir, ""}, {"a", kindDir, "twice"}}},
		{"file twice", []add{{"a", kindFile, ""}, {"a", kindLink, "twice"}}},
		{"file under file", []add{{"a", kindFile, ""}, {"a/b/c", kindFile, "both a file and a directory"}}},
		{"file over dir", []add{{"a/b/c", kindFile, ""}, {"a/b", kindLink, "both a file and a directory"}}},
		{"case of a parent", []add{{"A/b", kindFile, ""}, {"a/c", kindFile, "letter case"}}},
		{"case of a leaf", []add{{"x/Read", kindFile, ""}, {"x/read", kindFile, "letter case"}}},
		{"siblings", []add{{"a/b", kindFile, ""}, {"a/c", kindFile, ""}, {"a/d/e", kindFile, ""}}},
	}
	for _, tc := range tests {
		s := pathSet{}
		for _, a := range tc.adds {
			_, err := s.add(a.p, a.k)
			switch {
			case a.want == "" && err != nil:
				t.Errorf("%s: add(%q) = %v", tc.name, a.p, err)
			case a.want != "" && (err == nil || !strings.Contains(err.Error(), a.want)):
				t.Errorf("%s: add(%q) = %v, want an error saying %q", tc.name, a.p, err, a.want)
			}
		}
	}
	s := pathSet{}
	if _, err := s.add("Dir/File", kindFile); err != nil {
		t.Fatal(err)
	}
	if s.lookup("Dir/File") == nil || s.lookup("dir/file") != nil || s.lookup("Dir").kind != kindImplicitDir {
		t.Error("lookup must match exact paths only")
	}
}
