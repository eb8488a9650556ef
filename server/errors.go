package server

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/jsonout"
	"reasonix.io/plugind/secrets"
)

// Error codes of requests the daemon refuses before they reach the backend.
// The backend's own codes (install.*, registry.*) are SPEC §11's.
const (
	CodeBadRequest       = "request.invalid"
	CodeUnauthorized     = "request.unauthorized"
	CodeForbidden        = "request.forbidden"
	CodeNoRoute          = "request.not_found"
	CodeMethodNotAllowed = "request.method_not_allowed"
	CodeTooLarge         = "request.too_large"
	CodeInternal         = "server.internal"
	CodeShuttingDown     = "server.shutting_down"
	CodeCancelled        = "request.cancelled"
	CodeBusy             = "server.busy"
	// A page's session ended (expired, signed out, the daemon restarted),
	// or a request relied on the session cookie without the page token.
	CodeSignedOut = "session.signed_out"
	// A newer sign-in in the same browser replaced the page's session.
	CodeSessionReplaced = "session.replaced"
)

// ErrorBody is the JSON of every refusal and failure. Backend responses
// (installer.Response) carry the same three fields among others.
type ErrorBody struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error"`
	ErrorCode string `json:"errorCode"`
}

// writeJSON encodes v the way the CLI prints it (two-space indent, no HTML
// escaping), so the API and `--json` output are byte-for-byte the same.
// Error bodies and backend responses quote the request's source and the
// backend's errors: their credentials are masked here, on every route.
func writeJSON(w http.ResponseWriter, status int, v any) {
	switch b := v.(type) {
	case ErrorBody:
		b.Error = secrets.Mask(b.Error)
		v = b
	case *installer.Response:
		v = b.Redacted()
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = jsonout.Write(w, v)
}

func writeError(w http.ResponseWriter, status int, code, format string, args ...any) {
	writeJSON(w, status, ErrorBody{OK: false, Error: fmt.Sprintf(format, args...), ErrorCode: code})
}

// codeStatus maps a backend error code to an HTTP status: 4xx for what the
// request asked that cannot be done, 5xx only when the daemon itself
// failed. A code not listed (conflict, approval_denied, digest_mismatch,
// budget_exceeded, unsafe_archive, not_pinnable, offline_miss, blocked,
// source_unreadable, and codes added later) refuses a well-formed
// request: 422.
var codeStatus = map[plugind.Code]int{
	"":                             http.StatusInternalServerError,
	plugind.CodeInvalidSource:      http.StatusBadRequest,
	plugind.CodeNotFound:           http.StatusNotFound,
	plugind.CodeRegistryUnreadable: http.StatusConflict,
	plugind.CodePublicationFailed:  http.StatusInternalServerError,
}

// fail answers err as an ErrorBody.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code := s.classify(r, err)
	writeJSON(w, status, ErrorBody{OK: false, Error: err.Error(), ErrorCode: code})
}

// reply answers an operation's result. A backend response is answered
// whole (the CLI's JSON): 200 when it succeeded, else with its error's
// status. Anything else is JSON with 200, or, on error, the error alone.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, v any, err error) {
	resp, isResponse := v.(*installer.Response)
	switch {
	case isResponse && resp == nil:
		err = cmp.Or(err, errors.New("no response"))
	case isResponse && ((resp.OK && err == nil) || resp.Applied):
		// Applied is a success at the HTTP level even when partial: the
		// body says what was not installed.
		writeJSON(w, http.StatusOK, resp)
		return
	case isResponse:
		status, _ := s.classify(r, cmp.Or(err, resp.Err))
		writeJSON(w, status, resp)
		return
	case err == nil:
		writeJSON(w, http.StatusOK, v)
		return
	}
	s.fail(w, r, err)
}

// classify picks the status and code for err. An operation that failed
// because the daemon is stopping is 503, whatever the backend called it.
func (s *Server) classify(r *http.Request, err error) (int, string) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge, CodeTooLarge
	}
	code := plugind.CodeOf(err)
	status := cmp.Or(codeStatus[code], http.StatusUnprocessableEntity)
	if status >= 500 && s.life.Err() != nil { // in-flight work was told to stop
		return http.StatusServiceUnavailable, CodeShuttingDown
	}
	if code == "" {
		return status, CodeInternal
	}
	return status, string(code)
}
