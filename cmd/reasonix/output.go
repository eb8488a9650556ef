package main

import (
	"encoding/json"
	"fmt"
	"io"

	"reasonix.io/plugind"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// fail prints err for a text command and returns the exit-1 error.
func fail(w io.Writer, err error) error {
	if code := plugind.CodeOf(err); code != "" {
		fmt.Fprintf(w, "reasonix: %v [%s]\n", err, code)
	} else {
		fmt.Fprintf(w, "reasonix: %v\n", err)
	}
	return errFailed
}
