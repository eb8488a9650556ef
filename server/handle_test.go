package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
)

// reply answers every route's result by one rule: a backend response
// whole (with its error's status), any other value as 200, an error alone
// as an ErrorBody.
func TestReply(t *testing.T) {
	t.Parallel()
	s := newEnv(t, envOpts{}).srv
	notFound := plugind.Errorf(plugind.CodeNotFound, "plugin %q is not installed", "ghost")
	for _, tc := range []struct {
		name       string
		v          any
		err        error
		wantStatus int
		wantKeys   map[string]any // top-level fields the body must have
	}{
		{"value", map[string]any{"ok": true, "plugins": []string{}}, nil, http.StatusOK,
			map[string]any{"ok": true}},
		{"error", map[string]any{"ok": true, "marketplaces": nil}, notFound, http.StatusNotFound,
			map[string]any{"ok": false, "errorCode": "install.not_found", "error": `plugin "ghost" is not installed`}},
		{"no response, error", (*installer.Response)(nil), notFound, http.StatusNotFound,
			map[string]any{"ok": false, "errorCode": "install.not_found"}},
		{"response ok", &installer.Response{OK: true, Source: "src"}, nil, http.StatusOK,
			map[string]any{"ok": true, "source": "src"}},
		{"response failed", &installer.Response{Source: "src", Err: notFound}, nil, http.StatusNotFound,
			map[string]any{"ok": false, "source": "src"}},
		{"response and error", &installer.Response{OK: true, Source: "src"}, notFound, http.StatusNotFound,
			map[string]any{"source": "src"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			s.reply(rec, httptest.NewRequest("GET", "/", nil), tc.v, tc.err)
			if rec.Code != tc.wantStatus {
				t.Errorf("status %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("%v: %s", err, rec.Body)
			}
			for k, want := range tc.wantKeys {
				if got := body[k]; got != want {
					t.Errorf("%s = %#v, want %#v: %s", k, got, want, rec.Body)
				}
			}
		})
	}
}

// run's operation outlives a client that leaves (the request's context is
// cancelled) but not the daemon's stop.
func TestRunIsDetached(t *testing.T) {
	t.Parallel()
	s := newEnv(t, envOpts{}).srv
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("POST", "/", nil).WithContext(ctx)
	var opErr error
	s.run(httptest.NewRecorder(), req, nil, func(ctx context.Context) (any, error) {
		opErr = ctx.Err()
		return map[string]any{"ok": true}, nil
	})
	if opErr != nil {
		t.Fatalf("the operation saw the client's cancellation: %v", opErr)
	}
	s.stop()
	rec := httptest.NewRecorder()
	s.run(rec, req, nil, func(ctx context.Context) (any, error) {
		return nil, ctx.Err()
	})
	if !errors.Is(s.life.Err(), context.Canceled) || rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("after stop: %d %s", rec.Code, rec.Body)
	}
}
