package git

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// TestUnauthorizedWithAndWithoutCredentials: a 401 to a request without
// credentials is GitHub's answer for a repository it will not show (not
// found, remembered as such); with credentials it is their refusal:
// ErrRefused, final, never "not found", and the token is not in the error.
func TestUnauthorizedWithAndWithoutCredentials(t *testing.T) {
	t.Parallel()
	const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
	}))
	defer srv.Close()
	src, err := source.Parse("git:github.com/acme/private")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		token        string
		refused      bool
		notFound     bool
		wantInString string
	}{
		{name: "anonymous", notFound: true, wantInString: "not accessible without credentials"},
		{name: "with a token", token: token, refused: true, wantInString: "refused the credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(src, Config{URL: srv.URL + "/acme/private.git", Token: tc.token})
			_, err := r.Refs(context.Background())
			if err == nil {
				t.Fatal("no error from a 401")
			}
			if got := errors.Is(err, host.ErrRefused); got != tc.refused {
				t.Errorf("ErrRefused: %v, want %v (%v)", got, tc.refused, err)
			}
			if got := host.IsNotFound(err); got != tc.notFound {
				t.Errorf("IsNotFound: %v, want %v (%v)", got, tc.notFound, err)
			}
			if !strings.Contains(err.Error(), tc.wantInString) || strings.Contains(err.Error(), token) {
				t.Errorf("message: %v", err)
			}
		})
	}
}
