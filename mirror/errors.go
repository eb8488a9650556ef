package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
)

// apiError is what an /v1 route answers when it cannot serve: the HTTP
// status, the SPEC §11 error code and, for "does not exist" answers, which
// thing is missing, so the client rebuilds the host package's typed error
// (and its cache remembers it as it would upstream's).
type apiError struct {
	Status int          `json:"-"`
	Msg    string       `json:"error"`
	Code   plugind.Code `json:"errorCode"`
	// Kind is repo, ref, commit, unreachable or path for a not-found.
	Kind string `json:"kind,omitempty"`
	// Rule is the policy rule that blocked the request.
	Rule string `json:"rule,omitempty"`
}

func (e *apiError) Error() string { return e.Msg }

// toAPI turns any error of an operation into its answer.
func toAPI(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	msg := plugind.RedactSecrets(err.Error())
	code := plugind.CodeOf(err)
	if kind := host.KindOf(err); kind != "" {
		if code == "" {
			code = plugind.CodeNotFound
		}
		return &apiError{Status: http.StatusNotFound, Msg: msg, Code: code, Kind: kind}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &apiError{Status: http.StatusGatewayTimeout, Msg: msg, Code: plugind.CodeSourceUnreadable}
	case errors.Is(err, context.Canceled):
		return &apiError{Status: http.StatusServiceUnavailable, Msg: msg, Code: plugind.CodeCancelled}
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
	case "":
		code = plugind.CodeSourceUnreadable
	}
	return &apiError{Status: http.StatusBadGateway, Msg: msg, Code: code}
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...), Code: plugind.CodeInvalidSource}
}
