package jsondoc

import "testing"

// TestIsURL: each verdict was measured with Claude Code 2.1.197 on a
// plugin.json whose homepage is the string.
func TestIsURL(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"https://github.com/foo bar": true, "http://localhost:3000": true, "https://例え.jp/x": true,
		"https:/x.com": true, "https:example.com": true, "www.example.com": false, " https://x.com ": true,
		"https://": false, "http://a b.com": false, "mailto:x@y.z": true, "ftp://x": true,
		"file:///tmp/x": true, "https://x.com:abc/": false, "https://user@x.com": true,
		"javascript:alert(1)": true, "https://[::1]:8080/": true, "https://x.com/%zz": true,
		"git@github.com:o/r.git": false, "HTTPS://X.COM": true, "https://x_y.com": true,
	} {
		if got := IsURL(s); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", s, got, want)
		}
	}
}
