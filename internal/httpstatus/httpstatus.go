// Package httpstatus records what a handler answered, for request logs and
// metrics: the daemon's, the mirror's and the fake GitHub's.
package httpstatus

import (
	"cmp"
	"net/http"
)

// Recorder passes a response through to the ResponseWriter it wraps and
// remembers its status and how many body bytes were written.
type Recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

// Record wraps w.
func Record(w http.ResponseWriter) *Recorder {
	return &Recorder{ResponseWriter: w}
}

// WriteHeader keeps the first status, as net/http sends only the first.
func (r *Recorder) WriteHeader(code int) {
	r.status = cmp.Or(r.status, code)
	r.ResponseWriter.WriteHeader(code)
}

// Write counts the bytes written; a body without a header first is a 200.
func (r *Recorder) Write(b []byte) (int, error) {
	r.status = cmp.Or(r.status, http.StatusOK)
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer, so
// Flush, deadlines and hijacking work through the Recorder. (No Flush
// method of its own: one without an error result would hide a failed
// flush from ResponseController.)
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Status is the status the handler answered: 200 when it wrote nothing,
// which net/http sends as 200 too.
func (r *Recorder) Status() int { return cmp.Or(r.status, http.StatusOK) }

// Bytes is how many body bytes were written.
func (r *Recorder) Bytes() int64 { return r.bytes }
