package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
)

// TestErrorBodiesMaskCredentials sends sources that carry credentials to
// every route that can echo one: no answer and no log line repeats them.
func TestErrorBodiesMaskCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	secrets := []string{"hunter2secret", "qtoksecret9", "ghp_0123456789abcdefghijklmn", "sigsecret77"}
	cases := []struct {
		name, method, path string
		body               any
	}{
		{"userinfo", "POST", "/plugins/plan", map[string]any{"source": "https://user:hunter2secret@github.com/a/b"}},
		{"query token", "POST", "/plugins/plan", map[string]any{"source": "https://github.com/a/b?access_token=qtoksecret9"}},
		{"token as user", "POST", "/plugins/plan", map[string]any{"source": "https://ghp_0123456789abcdefghijklmn@github.com/a/b"}},
		{"git host", "POST", "/plugins/plan", map[string]any{"source": "https://git.example.test/x.git?sig=sigsecret77"}},
		{"install", "POST", "/plugins/install", map[string]any{"source": "https://user:hunter2secret@github.com/a/b", "planId": "low:sha256:00000000000000000000000000000000"}},
		{"unknown field", "POST", "/plugins/plan", map[string]any{"source": "https://u:hunter2secret@h/x", "token=qtoksecret9": 1}},
	}
	for _, c := range cases {
		r := e.do(c.method, c.path, c.body, nil)
		if r.status < 400 {
			t.Errorf("%s: status %d, want a refusal: %s", c.name, r.status, r.body)
		}
		for _, s := range secrets {
			if bytes.Contains(r.body, []byte(s)) {
				t.Errorf("%s: answer repeats %q: %s", c.name, s, r.body)
			}
		}
	}
	logged := e.log.String()
	for _, s := range secrets {
		if strings.Contains(logged, s) {
			t.Errorf("the log repeats %q:\n%s", s, logged)
		}
	}
}

// TestFailMasksCredentials drives fail and writeError directly with errors
// that quote a credential, as a backend error or a request echo would.
func TestFailMasksCredentials(t *testing.T) {
	t.Parallel()
	s := newEnv(t, envOpts{}).srv
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/plugins/plan", nil)
	s.fail(rec, req, plugind.Errorf(plugind.CodeInvalidSource, "source %q has userinfo", "https://me:pw1234@h/x"))
	var body ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error != `source "https://***@h/x" has userinfo` || body.ErrorCode != string(plugind.CodeInvalidSource) || rec.Code != http.StatusBadRequest {
		t.Errorf("fail: %d %+v", rec.Code, body)
	}
	rec = httptest.NewRecorder()
	writeError(rec, http.StatusBadRequest, CodeBadRequest, "request body: %v", errors.New(`bad "password": "p4ss word"`))
	if strings.Contains(rec.Body.String(), "p4ss") {
		t.Errorf("writeError: %s", rec.Body)
	}
	rec = httptest.NewRecorder()
	s.reply(rec, req, &installer.Response{Source: "https://h/x?token=t0ken9", Err: errors.New("fetch https://h/x?token=t0ken9: 404"),
		Warnings: []string{"see https://a:b9@h"}, Actions: []installer.Action{{Source: mustSource("x?key=k9k9"), Err: errors.New("Authorization: Bearer zz9zz9")}}}, nil)
	for _, secret := range []string{"t0ken9", "a:b9", "k9k9", "zz9zz9"} {
		if strings.Contains(rec.Body.String(), secret) {
			t.Errorf("reply repeats %q: %s", secret, rec.Body)
		}
	}
}

// TestPluginsListMasksHookSecrets installs a plugin whose hooks and MCP
// servers hold literal credentials: GET /plugins and GET /plugins/{name}
// show none of them.
func TestPluginsListMasksHookSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	src := filepath.Join(t.TempDir(), "secret-hooks")
	if err := os.CopyFS(src, os.DirFS("../manifest/testdata/claude-secrets")); err != nil {
		t.Fatal(err)
	}
	plan := e.plan(installer.Request{Source: mustSource(src)})
	if r := e.installByPlanID(plan.PlanID); r.status != 200 {
		t.Fatalf("install: %s", r.body)
	}
	secrets := []string{"abc123hooksecret", "tokhooksecret", "sk-ant-api03-hooksecretvalue0123456789", "hunter2hooksecret",
		"argsecret-literal-1", "mcpargsecret9", "dbpass9secret", "urlsecret9", "envsecret9value", "headersecret9"}
	for _, path := range []string{"/plugins"} {
		r := e.do("GET", path, nil, nil)
		if r.status != 200 || !bytes.Contains(r.body, []byte("Authorization: Bearer ***")) {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		for _, s := range secrets {
			if bytes.Contains(r.body, []byte(s)) {
				t.Errorf("GET %s shows %q", path, s)
			}
		}
	}
}
