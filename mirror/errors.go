package mirror

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
	"reasonix.io/plugind/resolver/host"
	wire "reasonix.io/plugind/resolver/host/mirror"
	"reasonix.io/plugind/secrets"
)

// apiError is what an /v1 route answers when it cannot serve.
type apiError = wire.ErrorBody

// toAPI turns any error of an operation into its answer. Only what was
// made to be read by a client is said to it: the mirror's own answers
// (apiError), and errors carrying an error code or a not-found kind — what
// upstream said, or the mirror's verdict on the content. Anything else is
// the mirror's own failure (its database, its object store, its disk): the
// client gets a generic answer naming an incident, and the details go to
// the log under that name, never into a response.
func (s *Server) toAPI(r *http.Request, err error) *apiError {
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae
	}
	switch {
	case errors.Is(err, meta.ErrDatabase), errors.Is(err, objects.ErrStore):
		return s.incident(r, "storage", err, http.StatusServiceUnavailable, "the mirror's storage failed")
	case errors.Is(err, meta.ErrNotInLog):
		return &apiError{Status: http.StatusNotFound, Code: plugind.CodeNotFound, Msg: "checksum log: " + err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{Status: http.StatusGatewayTimeout, Msg: secrets.Mask(err.Error()), Code: plugind.CodeSourceUnreadable}
	case errors.Is(err, context.Canceled):
		return &apiError{Status: http.StatusServiceUnavailable, Msg: secrets.Mask(err.Error()), Code: plugind.CodeCancelled}
	}
	code := plugind.CodeOf(err)
	kind := host.KindOf(err)
	if code == "" && kind == "" {
		return s.incident(r, "internal", err, http.StatusInternalServerError, "the mirror failed")
	}
	msg := secrets.Mask(err.Error())
	if kind != "" {
		return &apiError{Status: http.StatusNotFound, Msg: msg, Code: cmp.Or(code, plugind.CodeNotFound), Kind: kind}
	}
	status := http.StatusBadGateway
	switch code {
	case plugind.CodeBlocked:
		status = http.StatusForbidden
	case plugind.CodeInvalidSource, plugind.CodeNotPinnable:
		status = http.StatusBadRequest
	case plugind.CodeBudgetExceeded, plugind.CodeUnsafeArchive:
		// The content itself is refused: every replica and upstream would
		// say the same.
		status = http.StatusUnprocessableEntity
	}
	return &apiError{Status: status, Msg: msg, Code: code}
}

// incident logs an internal failure under a fresh name and returns the
// client's answer (status, saying what failed), which carries that name
// instead of the details.
func (s *Server) incident(r *http.Request, what string, err error, status int, said string) *apiError {
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	s.log.Error("request failed: "+what, "incident", id, "route", r.URL.Path, "client", clientOf(r.Context()), "err", err)
	return &apiError{Status: status, Code: plugind.CodeSourceUnreadable,
		Msg: fmt.Sprintf("%s (incident %s; its operator finds the details in its log)", said, id)}
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...), Code: plugind.CodeInvalidSource}
}
