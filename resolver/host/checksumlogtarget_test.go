package host

import (
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

func TestParseChecksumLog(t *testing.T) {
	_, vkey, err := note.GenerateKey(nil, "log.example.test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseChecksumLog(vkey + " https://log.example.test/log/")
	if err != nil || c.Name() != "log.example.test" || c.URL.String() != "https://log.example.test/log" {
		t.Fatalf("ParseConfig: %+v, %v", c, err)
	}
	if c, err := ParseChecksumLog("  "); c != nil || err != nil {
		t.Errorf("empty: %v, %v", c, err)
	}
	if _, err := ParseChecksumLog(vkey + " http://127.0.0.1:8080"); err != nil {
		t.Errorf("loopback http: %v", err)
	}
	for name, v := range map[string]string{
		"one field":     vkey,
		"three fields":  vkey + " https://a.test x",
		"bad key":       "log.example.test+1234+AAAA https://a.test",
		"plain http":    vkey + " http://log.example.test",
		"credentials":   vkey + " https://user:s3cret@log.example.test",
		"query":         vkey + " https://log.example.test/?a=b",
		"other scheme":  vkey + " file:///tmp/log",
		"relative path": vkey + " log.example.test",
	} {
		_, err := ParseChecksumLog(v)
		if err == nil {
			t.Errorf("%s: ParseChecksumLog(%q) accepted it", name, v)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
}
