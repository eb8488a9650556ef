package installer

import (
	"encoding/json"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// planIDOf parses a planId a test was given (a plan's response, or a
// well-formed one that no plan has).
func planIDOf(t testing.TB, s string) PlanID {
	t.Helper()
	id, err := ParsePlanID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestParsePlanID(t *testing.T) {
	t.Parallel()
	const hex32 = "0123456789abcdef0123456789abcdef"
	cases := []struct {
		name, in string
		// want is "" when in is a planId, else what the error says.
		want []string
	}{
		{"low", "low:sha256:" + hex32, nil},
		{"medium", "medium:sha256:" + hex32, nil},
		{"high", "high:sha256:" + hex32, nil},
		{"empty", "", []string{"plan id is empty", "32 hex digits"}},
		{"unknown risk", "severe:sha256:" + hex32, []string{`plan id "severe:sha256:` + hex32 + `" is malformed`, "low, medium or high"}},
		{"no risk", "sha256:" + hex32, []string{"is malformed"}},
		{"other hash", "low:sha1:" + hex32, []string{"is malformed", ":sha256:"}},
		{"short", "low:sha256:12", []string{`plan id "low:sha256:12" is malformed`, "32 hex digits"}},
		{"long", "low:sha256:" + hex32 + "00", []string{"is malformed"}},
		{"upper-case hex", "low:sha256:" + strings.ToUpper(hex32), []string{"is malformed"}},
		{"upper-case risk", "LOW:sha256:" + hex32, []string{"is malformed"}},
		{"trailing newline", "low:sha256:" + hex32 + "\n", []string{"is malformed"}},
		{"leading space", " low:sha256:" + hex32, []string{"is malformed"}},
		{"pasted twice, cut when shown", strings.Repeat("low:sha256:"+hex32, 3), []string{`..." is malformed`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			id, err := ParsePlanID(c.in)
			if len(c.want) == 0 {
				if err != nil || id.String() != c.in || id.IsZero() {
					t.Fatalf("ParsePlanID(%q) = %q, %v", c.in, id, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParsePlanID(%q) accepted it as %q", c.in, id)
			}
			if plugind.CodeOf(err) != plugind.CodeInvalidSource {
				t.Errorf("code %q, want %q", plugind.CodeOf(err), plugind.CodeInvalidSource)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !id.IsZero() {
				t.Errorf("a refused id parsed as %q", id)
			}
			// The flag refuses it the same way (the JSON decoder too, but
			// for "", which it reads as no planId: see TestPlanIDJSON).
			var viaFlag PlanID
			if ferr := viaFlag.Set(c.in); ferr == nil || ferr.Error() != err.Error() || plugind.CodeOf(ferr) != plugind.CodeInvalidSource || !viaFlag.IsZero() {
				t.Errorf("Set(%q) = %v, %q", c.in, ferr, viaFlag)
			}
		})
	}
}

// The --plan-id flag is a PlanID: parsed when the flags are.
func TestPlanIDFlag(t *testing.T) {
	t.Parallel()
	const good = "medium:sha256:00112233445566778899aabbccddeeff"
	cases := []struct {
		name string
		args []string
		want string // the id parsed, or a fragment of the parse error
		ok   bool
	}{
		{"given", []string{"-plan-id", good}, good, true},
		{"given with =", []string{"-plan-id=" + good}, good, true},
		{"left out", nil, "", true},
		{"malformed", []string{"-plan-id", "low:sha256:12"}, `plan id "low:sha256:12" is malformed`, false},
		{"empty (an unset variable)", []string{"-plan-id", ""}, "plan id is empty", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ap Approval
			fs := flag.NewFlagSet("install", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.Var(&ap.PlanID, "plan-id", "with --yes: install only if the fresh plan has this planId")
			err := fs.Parse(c.args)
			switch {
			case c.ok && (err != nil || ap.PlanID.String() != c.want):
				t.Fatalf("parse %v: %q, %v", c.args, ap.PlanID, err)
			case !c.ok && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("parse %v: %v, want an error saying %q", c.args, err, c.want)
			}
		})
	}
	if got := (&PlanID{}).Type(); got != "ID" {
		t.Errorf("usage shows --plan-id %s, want ID", got)
	}
}

// In JSON a planId is decoded once, where the body is; "" and a missing
// key are no planId, and an approval's id writes back as it came.
func TestPlanIDJSON(t *testing.T) {
	t.Parallel()
	const good = "high:sha256:00112233445566778899aabbccddeeff"
	type body struct {
		PlanID PlanID `json:"planId,omitzero"`
	}
	cases := []struct {
		in, want string
		ok       bool
	}{
		{`{"planId":"` + good + `"}`, good, true},
		{`{"planId":""}`, "", true},
		{`{}`, "", true},
		{`{"planId":"low:sha256:12"}`, `plan id "low:sha256:12" is malformed`, false},
		{`{"planId":12}`, "cannot unmarshal number", false},
	}
	for _, c := range cases {
		var b body
		err := json.Unmarshal([]byte(c.in), &b)
		switch {
		case c.ok && (err != nil || b.PlanID.String() != c.want):
			t.Errorf("%s: %q, %v", c.in, b.PlanID, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error saying %q", c.in, err, c.want)
		}
		if c.ok {
			out, _ := json.Marshal(b)
			if want := c.in; want == `{"planId":""}` {
				if string(out) != `{}` {
					t.Errorf("no planId writes as %s", out)
				}
			} else if string(out) != want {
				t.Errorf("%s writes back as %s", c.in, out)
			}
		}
	}
}

// legacyRequest is Request as it was while it carried the approving
// planId: stored plans written then must read as they are written now.
type legacyRequest struct {
	Source        string            `json:"source"`
	Name          string            `json:"name,omitempty"`
	Names         []string          `json:"names,omitempty"`
	Replace       bool              `json:"replace,omitempty"`
	Link          bool              `json:"link,omitempty"`
	Offline       bool              `json:"offline,omitempty"`
	AllowUnpinned bool              `json:"allowUnpinned,omitempty"`
	Refresh       bool              `json:"refresh,omitempty"`
	PlanID        string            `json:"planId,omitempty"`
	Subdir        string            `json:"subdir,omitempty"`
	Update        *UpdateRequest    `json:"update,omitempty"`
	Config        map[string]string `json:"config,omitempty"`
}

// TestStoredPlansFromBeforeReadTheSame: a stored plan's request written
// with the approving planId (as before the approval alone carried it)
// reads as the same Request as one written now, and the planId is not
// written any more.
func TestStoredPlansFromBeforeReadTheSame(t *testing.T) {
	t.Parallel()
	const id = "low:sha256:0123456789abcdef0123456789abcdef"
	update := &UpdateRequest{Names: []string{"a", "b"}, Marketplace: "m"}
	tricky := map[string]string{"subdir": `","update":{`, "config": "x", "a<b": "&"}
	cases := []struct {
		name   string
		req    Request
		update *UpdateRequest
	}{
		{"source only", Request{Source: mustSource("./p")}, nil},
		{"every flag", Request{Source: mustSource("https://github.com/a/b"), Name: "n", Names: []string{"x"}, Replace: true, Link: true, Offline: true, AllowUnpinned: true, Refresh: true}, nil},
		{"subdir", Request{Source: mustSource("https://example.com/r.git"), Subdir: "plugins/p"}, nil},
		{"update", Request{Offline: true}, update},
		{"config", Request{Source: mustSource(`s","subdir":"x`), Config: tricky}, nil},
		{"all", Request{Source: mustSource("s"), Name: "n", Refresh: true, Subdir: "d", Config: tricky}, update},
	}
	for _, c := range cases {
		r := c.req
		now, err := (&Plan{asked: r, update: c.update}).MarshalStored()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(now), `"planId":"`+id) {
			t.Errorf("%s: the approving planId is stored: %s", c.name, now)
		}
		var fromNow StoredPlan
		if err := json.Unmarshal(now, &fromNow); err != nil {
			t.Fatal(err)
		}
		w := fromNow.Request // the same request, written as before
		legacy, err := json.Marshal(legacyRequest{w.Source.String(), w.Name, w.Names, w.Replace, w.Link, w.Offline, w.AllowUnpinned, w.Refresh, id, w.Subdir, w.Update, w.Config})
		if err != nil {
			t.Fatal(err)
		}
		var fromBefore storedRequest
		if err := json.Unmarshal(legacy, &fromBefore); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromBefore, fromNow.Request) || fromNow.Request.Source != r.Source || fromNow.Request.Subdir != r.Subdir || !reflect.DeepEqual(fromNow.Request.Update, c.update) {
			t.Errorf("%s: a row from before reads as %+v, one from now as %+v", c.name, fromBefore, fromNow.Request)
		}
	}
}
