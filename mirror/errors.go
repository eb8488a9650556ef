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
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	switch {
	case errors.Is(err, meta.ErrDatabase), errors.Is(err, objects.ErrStore):
		id := s.incident(r, "storage", err)
		return &apiError{Status: http.StatusServiceUnavailable, Code: plugind.CodeSourceUnreadable,
			Msg: fmt.Sprintf("the mirror's storage failed (incident %s; its operator finds the details in its log)", id)}
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{Status: http.StatusGatewayTimeout, Msg: secrets.Mask(err.Error()), Code: plugind.CodeSourceUnreadable}
	case errors.Is(err, context.Canceled):
		return &apiError{Status: http.StatusServiceUnavailable, Msg: secrets.Mask(err.Error()), Code: plugind.CodeCancelled}
	}
	code := plugind.CodeOf(err)
	kind := host.KindOf(err)
	if code == "" && kind == "" {
		id := s.incident(r, "internal", err)
		return &apiError{Status: http.StatusInternalServerError, Code: plugind.CodeSourceUnreadable,
			Msg: fmt.Sprintf("the mirror failed (incident %s; its operator finds the details in its log)", id)}
	}
	msg := secrets.Mask(err.Error())
	if kind != "" {
		return &apiError{Status: http.StatusNotFound, Msg: msg, Code: cmp.Or(code, plugind.CodeNotFound), Kind: kind}
	}
	switch code {
	case plugind.CodeBlocked:
		return &apiError{Status: http.StatusForbidden, Msg: msg, Code: code}
	case plugind.CodeInvalidSource, plugind.CodeNotPinnable:
		return &apiError{Status: http.StatusBadRequest, Msg: msg, Code: code}
	case plugind.CodeBudgetExceeded, plugind.CodeUnsafeArchive:
		// The content itself is refused: every replica and upstream would
		// say the same.
		return &apiError{Status: http.StatusUnprocessableEntity, Msg: msg, Code: code}
	}
	return &apiError{Status: http.StatusBadGateway, Msg: msg, Code: code}
}

// incident logs an internal failure under a fresh name and returns the
// name, which the client's answer carries instead of the details.
func (s *Server) incident(r *http.Request, what string, err error) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	s.log.Error("request failed: "+what, "incident", id, "route", r.URL.Path, "client", clientOf(r.Context()), "err", err)
	return id
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...), Code: plugind.CodeInvalidSource}
}
