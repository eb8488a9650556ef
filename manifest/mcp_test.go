package manifest

import "testing"

func TestToolPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct{ plugin, server, want string }{
		{"superpowers", "github", "mcp__plugin_superpowers_github__"},
		{"my.plugin", "my server", "mcp__plugin_my_plugin_my_server__"},
		{"kit", "局部", toolPrefix("kit", "局部")},
	}
	for _, tc := range tests {
		if got := toolPrefix(tc.plugin, tc.server); got != tc.want {
			t.Errorf("toolPrefix(%q, %q) = %q, want %q", tc.plugin, tc.server, got, tc.want)
		}
	}
	a, b := toolID("局部"), toolID("全局")
	if a == b || a != toolID("局部") || len(a) != 9 {
		t.Errorf("non-ASCII IDs not stable and distinct: %q %q", a, b)
	}
}
