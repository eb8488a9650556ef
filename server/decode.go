package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"

	"reasonix.io/plugind"
)

// decode reads a JSON request body strictly: one object, no unknown fields,
// no key twice at any depth, and no key that matches a field only when case
// is ignored. encoding/json alone would take the last of two duplicate keys
// and match "SOURCE" or "planid" to their fields, so a body could say one
// thing to a proxy or a log reader and another to the daemon; checkKeys
// closes that. It answers 413 over the body cap and 400 for anything
// malformed, naming the offending key.
//
// encoding/json/v2 refuses duplicates and matches case-sensitively by
// default, but in Go 1.26 it still needs GOEXPERIMENT=jsonv2 to build, so
// the keys are checked on jsondoc's ordered tree instead.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	data, err := io.ReadAll(r.Body)
	if err == nil {
		err = decodeStrict(data, v)
	}
	if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, "request body is over the limit of %d bytes", mbe.Limit)
		return false
	}
	if plugind.CodeOf(err) != "" {
		// A value parsed as it is decoded (a source, a planId) refused
		// with the code the backend gives it.
		s.fail(w, r, err)
		return false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "request body: %v (want a JSON object)", err)
		return false
	}
	return true
}

// decodeStrict decodes data, a whole request body, into v (a pointer to a
// struct) under the rules of decode. The keys are checked first: a value
// parsed as it is decoded (a planId) would otherwise answer for a key
// given twice or in the wrong case.
func decodeStrict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("empty body")
	}
	if err := checkKeys(data, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}
