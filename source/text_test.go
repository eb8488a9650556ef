package source

import (
	"encoding/json"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// TestTextRoundTrip: every spelling String writes (and the recorded forms
// the registry holds) reads back as the same source and writes back the
// same bytes, so files written while sources were strings are unchanged.
func TestTextRoundTrip(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	for _, text := range []string{
		"git:github.com/acme/tools",
		"https://github.com/acme/tools",
		"https://github.com/acme/tools/tree/main",
		"https://github.com/acme/tools/tree/release/v2/plugins/x",
		"https://github.com/acme/tools/tree/" + sha + "/plugins/x",
		"https://git.example.test/team/tools.git",
		"https://git.example.test/team/tools.git#main",
		"https://git.example.test/team/tools.git#" + sha,
		"https://git.example.test/team/tools#" + sha,
		"/home/me/plugins/q",
		"/home/me/My Plugins/q",
		"/home/me/q.zip",
		"./q",
		"q",
		"q@market",
	} {
		t.Run(text, func(t *testing.T) {
			var s Source
			if err := s.UnmarshalText([]byte(text)); err != nil {
				t.Fatal(err)
			}
			out, err := s.MarshalText()
			if err != nil || string(out) != text {
				t.Fatalf("MarshalText = %q, %v; want %q", out, err, text)
			}
			// What the registry records from it (split, pinned, its folder
			// recorded) reads back as the very same value, so a recorded
			// source and one read back compare equal.
			if s.IsRemote() {
				split := s.Split(nil)
				branch := split.Bare()
				if s.NeedsSplit() {
					branch = s // a tree URL whose ref is not told apart is recorded as written
				}
				for _, recorded := range []Source{branch, split.Recorded(sha, split.Subdir), split.Recorded(sha, "plugins/q")} {
					var again Source
					if err := again.UnmarshalText([]byte(recorded.String())); err != nil {
						t.Fatalf("recorded %q: %v", recorded, err)
					}
					if again != recorded {
						t.Errorf("recorded %#v reads back as %#v", recorded, again)
					}
				}
			}
			if again := Local(text); s.IsLocal() && again != s {
				t.Errorf("Local(%q) = %#v, parsed %#v", text, again, s)
			}
		})
	}
}

// TestTextJSON: a Source in a JSON document is its string; "" (or a key
// left out) is the zero Source, and a bad one is refused as it is decoded
// with the code and message Parse gives, its credential masked.
func TestTextJSON(t *testing.T) {
	type doc struct {
		Source Source `json:"source"`
		Market Source `json:"marketplace,omitzero"`
	}
	var d doc
	if err := json.Unmarshal([]byte(`{"source":"git:github.com/acme/tools"}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.Source.Kind != GitHub || d.Source.Repo() != "acme/tools" || !d.Market.IsZero() {
		t.Fatalf("decoded %+v", d)
	}
	out, _ := json.Marshal(d)
	if string(out) != `{"source":"git:github.com/acme/tools"}` {
		t.Errorf("encoded %s", out)
	}
	if err := json.Unmarshal([]byte(`{"source":""}`), &d); err != nil || !d.Source.IsZero() {
		t.Errorf("empty source: %+v, %v", d.Source, err)
	}
	err := json.Unmarshal([]byte(`{"source":"https://user:ghp_0123456789abcdefghijklmnopqrstuvwxyzAB@github.com/acme/tools"}`), &d)
	if plugind.CodeOf(err) != plugind.CodeInvalidSource {
		t.Fatalf("bad source: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "ghp_0123456789") || !strings.Contains(msg, "userinfo") {
		t.Errorf("bad source error: %s", msg)
	}
}

// TestMasked: a source shown masks what looks like a credential in it (a
// folder's name is free text); the source itself is unchanged.
func TestMasked(t *testing.T) {
	s := Local("/home/me/ghp_0123456789abcdefghijklmnopqrstuvwxyzAB/q")
	shown, _ := s.Masked().MarshalText()
	if strings.Contains(string(shown), "ghp_0123456789") || !strings.HasPrefix(string(shown), "/home/me/") {
		t.Errorf("masked: %s", shown)
	}
	if !strings.Contains(s.String(), "ghp_0123456789") {
		t.Errorf("the source itself changed: %s", s)
	}
}

// TestFromTextIsTheInputGrammar: what a user gives is read by Parse (SPEC
// §5) — the recorded-only forms a registry may hold are refused there —
// and "" is no source.
func TestFromTextIsTheInputGrammar(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	for _, text := range []string{"/home/me/My Plugins/q", "https://git.example.test/team/loose#" + sha} {
		if _, err := FromText(text); plugind.CodeOf(err) != plugind.CodeInvalidSource {
			t.Errorf("FromText(%q): %v, want a refusal", text, err)
		}
		var s Source
		if err := s.UnmarshalText([]byte(text)); err != nil {
			t.Errorf("recorded %q: %v", text, err)
		}
	}
	if s, err := FromText(""); err != nil || !s.IsZero() {
		t.Errorf(`FromText(""): %+v %v`, s, err)
	}
	if s, err := FromText("one@shelf"); err != nil || s.Kind != MarketEntry || s.Entry != "one" || s.Market != "shelf" {
		t.Errorf("FromText(one@shelf): %+v %v", s, err)
	}
}
