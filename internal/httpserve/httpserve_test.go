package httpserve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestServe: a shutdown lets a request that finishes within the grace
// period answer; one that does not is cancelled after it (cancel is
// called) and still answers, before Serve returns.
func TestServe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		work     time.Duration // how long the handler runs unless cancelled
		wantBody string
	}{
		{name: "finishes within the grace", work: 10 * time.Millisecond, wantBody: "done"},
		{name: "cancelled after the grace", work: time.Minute, wantBody: "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			life, cancel := context.WithCancel(context.Background())
			started := make(chan struct{})
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(started)
				select {
				case <-time.After(tc.work):
					_, _ = io.WriteString(w, "done")
				case <-r.Context().Done():
					_, _ = io.WriteString(w, "cancelled")
				}
			}), BaseContext: func(net.Listener) context.Context { return life }}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- Serve(ctx, srv, ln, 200*time.Millisecond, cancel, slog.New(slog.DiscardHandler)) }()
			answered := make(chan string, 1)
			go func() {
				resp, err := http.Get("http://" + ln.Addr().String() + "/")
				if err != nil {
					answered <- "error: " + err.Error()
					return
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				answered <- string(body)
			}()
			<-started
			stop()
			if err := <-served; err != nil {
				t.Fatalf("Serve: %v", err)
			}
			if got := <-answered; got != tc.wantBody {
				t.Fatalf("answer %q, want %q", got, tc.wantBody)
			}
			if life.Err() == nil {
				t.Fatal("cancel was not called when Serve returned")
			}
		})
	}
}
