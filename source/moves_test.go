package source

import (
	"reflect"
	"strings"
	"testing"
)

const (
	shaA = "8e42d1a0000000000000000000000000000000aa"
	shaB = "ea7f59c0000000000000000000000000000000bb"
)

func TestMoves(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, from, to string
		want           []string
		where          string // to's Where, when set
	}{
		{"a new commit is no move", "https://github.com/acme/q/tree/" + shaA, "https://github.com/acme/q/tree/" + shaB, nil, "github.com/acme/q"},
		{"GitHub names ignore case", "https://github.com/Acme/Q/tree/" + shaA, "https://github.com/acme/q/tree/" + shaB, nil, ""},
		{"the owner swap of issue 21", "https://github.com/acme/q/tree/" + shaA, "https://github.com/evil/q/tree/" + shaB, []string{PartOwner}, "github.com/evil/q"},
		{"another repository", "https://github.com/acme/q/tree/" + shaA, "https://github.com/acme/r/tree/" + shaA, []string{PartRepository}, ""},
		{"another folder", "https://github.com/acme/market/tree/" + shaA + "/plugins/q", "https://github.com/acme/market/tree/" + shaB + "/plugins/evil", []string{PartSubfolder}, "github.com/acme/market (folder plugins/evil)"},
		{"a relative entry turned external", "https://github.com/acme/market/tree/" + shaA + "/q", "https://github.com/evil/q/tree/" + shaB, []string{PartOwner, PartRepository, PartSubfolder}, ""},
		{"another host", "https://github.com/acme/q/tree/" + shaA, "https://git.example.test/acme/q.git#" + shaB, []string{PartHost}, "git.example.test/acme/q"},
		{".git is spelling, not a place", "https://git.example.test/team/q.git#" + shaA, "https://git.example.test/team/q#" + shaB, nil, ""},
		{"another group on a generic host", "https://git.example.test/team/sub/q.git#" + shaA, "https://git.example.test/team/q.git#" + shaB, []string{PartOwner}, ""},
		{"generic hosts compare exactly", "https://git.example.test/Team/q.git#" + shaA, "https://git.example.test/team/q.git#" + shaB, []string{PartOwner}, ""},
		{"from this machine to a host", "/home/me/plugins/q", "https://github.com/evil/q/tree/" + shaB, []string{PartHost}, ""},
		{"another local folder", "/home/me/market/q", "/home/me/market/evil", []string{PartFolder}, "/home/me/market/evil"},
		{"a local folder spelled another way", "/home/me/market/q", "/home/me/market/./q/", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			from, err := ParseRecorded(c.from)
			if err != nil {
				t.Fatal(err)
			}
			to, err := ParseRecorded(c.to)
			if err != nil {
				t.Fatal(err)
			}
			if got := from.Moves(to); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Moves = %v, want %v", got, c.want)
			}
			if got := to.Moves(from); !reflect.DeepEqual(got, c.want) {
				t.Errorf("the other way, Moves = %v, want %v", got, c.want)
			}
			if c.where != "" && to.Where() != c.where {
				t.Errorf("Where = %q, want %q", to.Where(), c.where)
			}
		})
	}
	// The folder recorded beside a generic host's source counts.
	a, _ := Parse("https://git.example.test/team/tools.git#" + shaA)
	b := a.WithSubdir("plugins/evil")
	if got := a.WithSubdir("plugins/q").Moves(b); !reflect.DeepEqual(got, []string{PartSubfolder}) {
		t.Errorf("subfolder beside a generic source: %v", got)
	}
	if w := b.Where(); !strings.Contains(w, "(folder plugins/evil)") {
		t.Errorf("Where = %q", w)
	}
}
