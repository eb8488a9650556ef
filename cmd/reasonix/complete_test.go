package main

import "testing"

// TestCompletionIsTerminalSafe: what Tab offers comes from plugins and
// marketplaces, so a hostile name is not offered for insertion into the
// command line and a hostile description cannot drive the terminal.
func TestCompletionIsTerminalSafe(t *testing.T) {
	for _, c := range []struct {
		word string
		ok   bool
	}{
		{"hello-claude", true},
		{"tool_v2.1@acme-market", true},
		{"", false},
		{"a b", false},
		{"x\x1b]0;pwned\x07", false},
		{"x\u202egnp.exe", false},
		{"x;rm", false},
		{"$(id)", false},
		{"`id`", false},
		{"a\\b", false},
		{"it's", false},
	} {
		if got := completable(c.word); got != c.ok {
			t.Errorf("completable(%q) = %v, want %v", c.word, got, c.ok)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"A plugin.\nSecond line", "A plugin. Second line"},
		{"red \x1b[31mtext", `red \x1b[31mtext`},
	} {
		if got := oneLine(c.in); got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := oneLine("ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé"); len([]rune(got)) > 60 {
		t.Errorf("oneLine not cut to 60 characters: %d", len([]rune(got)))
	}
}
