package installer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"reasonix.io/plugind"
)

// MarshalJSON and WriteIndentedJSON encode a share of the actions per
// CPU and splice them in: their bytes must be those of encoding (and
// laying out) the response in one pass, for any
// number of actions, with errors and warnings anywhere, and with strings
// that spell the splice's marker.
func TestResponseMarshalSplicesActions(t *testing.T) {
	t.Parallel()
	onePass := func(r Response) []byte {
		type plain Response
		var wire []wireAction
		if r.Actions != nil {
			wire = make([]wireAction, len(r.Actions))
			for i, a := range r.Actions {
				wire[i] = a.wire()
			}
		}
		out, err := json.Marshal(struct {
			plain
			Actions  []wireAction `json:"actions"`
			Warnings []string     `json:"warnings"`
			errorFields
		}{plain(r), wire, r.Warnings, fieldsOf(r.Err)})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, n := range []int{-1, 0, 1, 2, 3, 7, 100} {
		r := Response{OK: true, Status: StatusPlanned, Source: `"actions":[] <&>`, Warnings: []string{`"actions":[]`}}
		if n >= 0 {
			r.Actions = []Action{}
		}
		for i := range n {
			a := Action{Name: fmt.Sprintf("p%03d", i), Action: ActionInstall, Status: ActionReady, Description: `say "actions":[]`}
			if i%3 == 1 {
				a.Status, a.Err = ActionBlocked, plugind.Errorf(plugind.CodeBlocked, "blocked %d <b>", i)
			}
			r.Actions = append(r.Actions, a)
		}
		if n == 7 {
			r.OK, r.Err = false, errors.New("it failed")
		}
		got, err := r.MarshalJSON()
		want := onePass(r)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d actions: MarshalJSON = %s, %v\nwant %s", n, got, err, want)
		}
		var laid bytes.Buffer
		if err := json.Indent(&laid, want, "", "  "); err != nil {
			t.Fatal(err)
		}
		var written bytes.Buffer
		if err := r.WriteIndentedJSON(&written); err != nil || !bytes.Equal(written.Bytes(), laid.Bytes()) {
			t.Errorf("%d actions: WriteIndentedJSON = %s, %v\nwant %s", n, written.Bytes(), err, laid.Bytes())
		}
	}
}
