package plugind

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
		got, err := CleanEntryName(tc.name, tc.isDir)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("CleanEntryName(%q) = %q, want refused (%s)", tc.name, got, tc.why)
		case tc.want == "" && !strings.Contains(err.Error(), tc.why):
			t.Errorf("CleanEntryName(%q) error %q does not say %q", tc.name, err, tc.why)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("CleanEntryName(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestFoldKey(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{"README.md", "readme.MD"},
		{"\u212a", "k"},             // Kelvin sign
		{"ſ", "S"},                  // long s
		{"Straße", "STRAßE"},        // ß has no simple upper-case pair but the rest folds
		{"Ωmega/ä", "ωMEGA/Ä"},      //
		{"ǅ", "ǆ"},                  // title case
		{"caf\u00e9", "CAFE\u0301"}, // NFC and NFD spellings of one name
	}
	for _, p := range same {
		if FoldKey(p[0]) != FoldKey(p[1]) {
			t.Errorf("FoldKey(%q) != FoldKey(%q)", p[0], p[1])
		}
	}
	differ := [][2]string{{"a", "b"}, {"ß", "ss"}, {"a/b", "a_b"}}
	for _, p := range differ {
		if FoldKey(p[0]) == FoldKey(p[1]) {
			t.Errorf("FoldKey(%q) == FoldKey(%q)", p[0], p[1])
		}
	}
}

func TestPathSet(t *testing.T) {
	t.Parallel()
	type add struct {
		p    string
		k    EntryKind
		want string // "" means accepted
	}
	tests := []struct {
		name string
		adds []add
	}{
		{"implicit then explicit dir", []add{{"a/b", EntryFile, ""}, {"a", EntryDir, ""}}},
		{"explicit dir twice", []add{{"a", EntryDir, ""}, {"a", EntryDir, "twice"}}},
		{"file twice", []add{{"a", EntryFile, ""}, {"a", EntryLink, "twice"}}},
		{"file under file", []add{{"a", EntryFile, ""}, {"a/b/c", EntryFile, "both a file and a directory"}}},
		{"file over dir", []add{{"a/b/c", EntryFile, ""}, {"a/b", EntryLink, "both a file and a directory"}}},
		{"case of a parent", []add{{"A/b", EntryFile, ""}, {"a/c", EntryFile, "letter case"}}},
		{"case of a leaf", []add{{"x/Read", EntryFile, ""}, {"x/read", EntryFile, "letter case"}}},
		{"siblings", []add{{"a/b", EntryFile, ""}, {"a/c", EntryFile, ""}, {"a/d/e", EntryFile, ""}}},
	}
	for _, tc := range tests {
		s := &PathSet{}
		for _, a := range tc.adds {
			_, err := s.Add(a.p, a.k)
			switch {
			case a.want == "" && err != nil:
				t.Errorf("%s: add(%q) = %v", tc.name, a.p, err)
			case a.want != "" && (err == nil || !strings.Contains(err.Error(), a.want)):
				t.Errorf("%s: add(%q) = %v, want an error saying %q", tc.name, a.p, err, a.want)
			}
		}
	}
	s := &PathSet{}
	if _, err := s.Add("Dir/File", EntryFile); err != nil {
		t.Fatal(err)
	}
	if s.Lookup("Dir/File") == nil || s.Lookup("dir/file") != nil || s.Lookup("Dir").Kind != EntryImplicitDir {
		t.Error("lookup must match exact paths only")
	}
}
