package marketplace

import (
	"strings"
	"testing"
)

// TestEntryReasonsMaskCredentials gives entries whose sources carry
// credentials in every shape an entry can hold: the reason (and the error
// a by-name selection reports) names the source without the secret.
func TestEntryReasonsMaskCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, entry, secret, shown string
	}{
		{"unpinned string source", `{"name":"a","source":"https://user:tok3n9@github.com/o/r"}`, "tok3n9", `"https://***@github.com/o/r" is not a plugin source`},
		{"string source query", `{"name":"a","source":"https://example.com/p.git?access_token=q7q7q7"}`, "q7q7q7", "access_token=***"},
		{"url not GitHub", `{"name":"a","source":{"source":"url","url":"https://me:pw9pw9@gitlab.example.com/o/r.git","sha":"` + sha1 + `"}}`, "pw9pw9", "https://***@gitlab.example.com"},
		{"url on GitHub with userinfo", `{"name":"a","source":{"source":"url","url":"https://me:pw9pw9@github.com/o/r","sha":"` + sha1 + `"}}`, "pw9pw9", "***@github.com"},
		{"git-subdir url", `{"name":"a","source":{"source":"git-subdir","url":"https://x.example/r?token=t5t5t5","path":"p","sha":"` + sha1 + `"}}`, "t5t5t5", "token=***"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, e := oneEntry(t, "", tc.entry, Options{}, Parse)
			if e.Status == StatusReady {
				t.Fatalf("entry is ready: %+v", e)
			}
			if strings.Contains(e.Reason, tc.secret) || strings.Contains(e.Err().Error(), tc.secret) {
				t.Errorf("reason repeats %q: %s", tc.secret, e.Reason)
			}
			if !strings.Contains(e.Reason, tc.shown) {
				t.Errorf("reason %q does not say %q", e.Reason, tc.shown)
			}
		})
	}
}
