package host

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOriginOnly: a request's Authorization reaches only the origin the
// credential belongs to; a redirect to another port of the same host name
// (which Go's client would forward it to) carries none.
func TestOriginOnly(t *testing.T) {
	t.Parallel()
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, "other:"+r.Header.Get("Authorization"))
	}))
	defer other.Close()
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, "own:"+r.Header.Get("Authorization"))
		http.Redirect(w, r, other.URL+"/next", http.StatusFound)
	}))
	defer own.Close()
	c := OriginOnly(&http.Client{}, own.URL)
	req, _ := http.NewRequest(http.MethodGet, own.URL+"/first", nil)
	req.SetBasicAuth("alice", "pw")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(got) != 2 || got[0] == "own:" || got[1] != "other:" {
		t.Errorf("requests carried %q, want the credential at its own origin only", got)
	}
}

// TestSameOrigin: scheme, host and port, a default port written or not.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		"https://git.example.test/x":     true,
		"https://git.example.test:443/x": true,
		"https://GIT.example.test/x":     true,
		"http://git.example.test/x":      false,
		"https://git.example.test:8443/": false,
		"https://other.example.test/x":   false,
		"https://git.example.test.evil/": false,
	} {
		u, _ := url.Parse(raw)
		if got := sameOrigin(u, "https://git.example.test"); got != want {
			t.Errorf("sameOrigin(%s) = %v", raw, got)
		}
	}
}

// TestNetrcLookup: machine entries, default, macdef bodies skipped, and
// the warning for a file others can read.
func TestNetrcLookup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ".netrc")
	content := "machine a.example.test\n  login la\n  password pa-secret-1\n" +
		"macdef init\nmachine b.example.test login evil password evil\n\n" +
		"machine b.example.test login lb password pb account x\n" +
		"default login ld password pd\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{"a.example.test": "la:pa-secret-1", "b.example.test": "lb:pb", "c.example.test": "ld:pd"} {
		var warned []string
		l, p, ok, err := netrcLookup(path, host, func(w string) { warned = append(warned, w) })
		if err != nil || !ok || l+":"+p != want || len(warned) != 0 {
			t.Errorf("%s: %q %q %v %v (warned %v), want %s", host, l, p, ok, err, warned, want)
		}
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var warned []string
	if _, _, ok, _ := netrcLookup(path, "a.example.test", func(w string) { warned = append(warned, w) }); !ok || len(warned) != 1 || !strings.Contains(warned[0], "chmod 600") || strings.Contains(warned[0], "pa-secret-1") {
		t.Errorf("a 0644 .netrc: found %v, warned %q", ok, warned)
	}
	if _, _, ok, err := netrcLookup(filepath.Join(dir, "none"), "a.example.test", nil); ok || err != nil {
		t.Errorf("a missing .netrc: %v %v", ok, err)
	}
}
