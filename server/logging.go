package server

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"golang.org/x/term"

	"reasonix.io/plugind/internal/httpstatus"
	"reasonix.io/plugind/secrets"
)

// NewLogger returns the daemon's logger: human-readable text when w is a
// terminal, one JSON object per line otherwise (a service manager, a file).
// Credentials in logged values are masked (secrets.MaskAttr).
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: secrets.MaskAttr}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// logRequests writes one line per request: method, path, status, duration,
// response size and peer. Only the escaped path is logged: never headers
// (the token travels in one), never the query.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := httpstatus.Record(w)
		defer func() {
			status := sw.Status()
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			s.log.LogAttrs(r.Context(), level, "request",
				slog.String("method", r.Method),
				slog.String("path", r.URL.EscapedPath()),
				slog.Int("status", status),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.Int64("bytes", sw.Bytes()),
				slog.String("remote", r.RemoteAddr),
			)
		}()
		next.ServeHTTP(sw, r)
	})
}
