package installer

import (
	"encoding/json"
	"testing"

	"reasonix.io/plugind"
)

// Response.MarshalJSON writes its actions in the same pass; the bytes must
// be those of the plain way (each action through Action.MarshalJSON), key
// order included, with and without errors and actions.
func TestResponseMarshalMatchesPerActionEncoding(t *testing.T) {
	t.Parallel()
	failed := plugind.Errorf(plugind.CodeNotFound, "commit %s not found <&>", "abc")
	responses := []Response{
		{OK: true, Status: StatusPlanned, PlanID: "low:sha256:00", Resolved: &Resolved{Kind: "marketplace", Commit: "c"},
			Actions: []Action{
				{Name: "a", Action: ActionInstall, Status: ActionReady, Inventory: emptyInventory(), Warnings: []string{"w"}},
				{Name: "b", Action: ActionSkip, Status: ActionBlocked, Err: failed},
			},
			Warnings: []string{"x"}},
		{OK: false, Status: StatusRefused, Err: failed},
		{Actions: []Action{}},
	}
	for i, r := range responses {
		got, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		type plain Response
		want, err := json.Marshal(struct {
			plain
			errorFields
		}{plain(r), fieldsOf(r.Err)})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("response %d:\n got %s\nwant %s", i, got, want)
		}
		// Read back over a response that had an error: what the bytes do
		// not say is not kept.
		back := Response{Err: failed}
		if err := json.Unmarshal(got, &back); err != nil || len(back.Actions) != len(r.Actions) {
			t.Errorf("response %d does not read back: %v", i, err)
		}
		if again, err := back.MarshalJSON(); err != nil || string(again) != string(got) {
			t.Errorf("response %d reads back as\n%s\nnot\n%s (%v)", i, again, got, err)
		}
	}
}
