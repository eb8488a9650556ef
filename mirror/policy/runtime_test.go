package policy

import (
	"strings"
	"testing"
)

// TestRuntimeRule: the policy's "runtime" member takes exactly "allow" or
// "block-unpinned" (none: allow); anything else is refused, naming it.
func TestRuntimeRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc     string
		want    Runtime
		wantErr []string
	}{
		{`{}`, RuntimeAllow, nil},
		{`{"runtime": ""}`, RuntimeAllow, nil},
		{`{"runtime": null}`, RuntimeAllow, nil},
		{`{"runtime": "allow"}`, RuntimeAllow, nil},
		{`{"runtime": "block-unpinned", "block": ["github.com/bad"]}`, RuntimeBlockUnpinned, nil},
		{`{"runtime": "block"}`, "", []string{"runtime", `"block" is not a runtime rule`, "block-unpinned"}},
		{`{"runtime": "Block-Unpinned"}`, "", []string{`"Block-Unpinned"`}},
		{`{"runtime": " block-unpinned"}`, "", []string{`" block-unpinned"`}},
		{`{"runtime": true}`, "", []string{"not a policy document", "runtime"}},
		{`{"runtime": ["block-unpinned"]}`, "", []string{"not a policy document"}},
		{`{"runtimes": "block-unpinned"}`, "", []string{"unknown field", "runtimes"}},
	} {
		p, err := Parse([]byte(tc.doc))
		if tc.wantErr != nil {
			if err == nil {
				t.Errorf("%s: accepted (%q)", tc.doc, p.Runtime())
				continue
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %v; want it to say %q", tc.doc, err, w)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.doc, err)
			continue
		}
		if got := p.Runtime(); got != tc.want {
			t.Errorf("%s: runtime %q, want %q", tc.doc, got, tc.want)
		}
	}
	var none *Policy
	if none.Runtime() != RuntimeAllow {
		t.Errorf("a nil policy's runtime rule is %q", none.Runtime())
	}
	for _, s := range []string{"", "allow", "block-unpinned"} {
		if _, err := ParseRuntime(s); err != nil {
			t.Errorf("ParseRuntime(%q): %v", s, err)
		}
	}
}
