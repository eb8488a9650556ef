package httpstatus

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestRecorder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		handler    func(w http.ResponseWriter)
		wantStatus int
		wantBytes  int64
		wantBody   string
	}{
		{"nothing written", func(http.ResponseWriter) {}, http.StatusOK, 0, ""},
		{"body alone is a 200", func(w http.ResponseWriter) { _, _ = io.WriteString(w, "hello") }, http.StatusOK, 5, "hello"},
		{"explicit status", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, "tea")
		}, http.StatusTeapot, 3, "tea"},
		{"first status wins", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			w.WriteHeader(http.StatusInternalServerError)
		}, http.StatusNotFound, 0, ""},
		{"bytes add up", func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, "ab")
			_, _ = io.WriteString(w, "cde")
		}, http.StatusOK, 5, "abcde"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			under := httptest.NewRecorder()
			rec := Record(under)
			tc.handler(rec)
			if got := rec.Status(); got != tc.wantStatus {
				t.Errorf("Status() = %d, want %d", got, tc.wantStatus)
			}
			if got := rec.Bytes(); got != tc.wantBytes {
				t.Errorf("Bytes() = %d, want %d", got, tc.wantBytes)
			}
			if got := under.Body.String(); got != tc.wantBody {
				t.Errorf("body passed through = %q, want %q", got, tc.wantBody)
			}
			if got := under.Code; got != tc.wantStatus {
				t.Errorf("status passed through = %d, want %d", got, tc.wantStatus)
			}
		})
	}
}

// A handler behind the Recorder still reaches the connection through
// http.ResponseController: Flush and deadlines are not lost by wrapping.
func TestRecorderKeepsResponseController(t *testing.T) {
	t.Parallel()
	flushed := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := Record(w)
		rc := http.NewResponseController(rec)
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			flushed <- err
			return
		}
		_, _ = io.WriteString(rec, "part")
		flushed <- rc.Flush()
	}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := <-flushed; err != nil {
		t.Fatalf("through the Recorder: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "part" {
		t.Fatalf("body = %q", body)
	}
}

// Without Unwrap, ResponseController would answer ErrNotSupported.
func TestRecorderFlushUnsupportedUnderneath(t *testing.T) {
	t.Parallel()
	rec := Record(plainWriter{httptest.NewRecorder()})
	if err := http.NewResponseController(rec).Flush(); err == nil {
		t.Fatal("a flush the wrapped writer cannot do reported success")
	}
}

// plainWriter is a ResponseWriter that cannot flush.
type plainWriter struct{ w *httptest.ResponseRecorder }

func (p plainWriter) Header() http.Header         { return p.w.Header() }
func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p plainWriter) WriteHeader(code int)        { p.w.WriteHeader(code) }
