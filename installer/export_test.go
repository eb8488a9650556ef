package installer

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind/source"
)

// secretFixture is the manifest package's plugin whose hooks and MCP
// servers carry literal credentials.
const secretFixture = "../manifest/testdata/claude-secrets"

var fixtureSecrets = []string{
	"abc123hooksecret", "tokhooksecret", "sk-ant-api03-hooksecretvalue0123456789", "hunter2hooksecret",
	"argsecret-literal-1", "mcpargsecret9", "dbpass9secret", "urlsecret9", "envsecret9value", "headersecret9",
}

// TestExportSecretHooks exports a plugin whose hook commands, hook args,
// MCP args, URL and env hold literal credentials: no file of the zip holds
// one, every reference the export wrote is listed in RequiredEnv, the
// plan and the listing never showed one, and the zip installs again.
func TestExportSecretHooks(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	src := filepath.Join(t.TempDir(), "secret-hooks")
	if err := os.CopyFS(src, os.DirFS(secretFixture)); err != nil {
		t.Fatal(err)
	}
	resp := env.mustInstall(src)
	planJSON, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := env.in.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	listJSON, err := json.Marshal(infos)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fixtureSecrets {
		if bytes.Contains(planJSON, []byte(s)) || bytes.Contains(listJSON, []byte(s)) {
			t.Errorf("plan or list shows %q", s)
		}
	}

	var buf bytes.Buffer
	info, err := env.in.Export(context.Background(), "secret-hooks", &buf)
	if err != nil {
		t.Fatal(err)
	}
	// DB_REGION is no credential, but every literal env value is moved
	// out: the exporter cannot tell which ones are.
	wantEnv := []string{"ANTHROPIC_API_KEY", "API_ACCESS_TOKEN", "API_X_API_KEY", "DB_API_TOKEN", "DB_PASSWORD",
		"DB_REGION", "DB_URL_CREDENTIALS", "HOOK_API_KEY", "HOOK_AUTH_TOKEN", "HOOK_PASSWORD", "HOOK_TOKEN"}
	if !slices.Equal(info.RequiredEnv, wantEnv) {
		t.Errorf("requiredEnv = %q\nwant %q", info.RequiredEnv, wantEnv)
	}
	if want := []string{".mcp.json", "hooks/hooks.json"}; !slices.Equal(info.Stripped, want) {
		t.Errorf("stripped = %q, want %q", info.Stripped, want)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	files := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = string(data)
		for _, s := range fixtureSecrets {
			if strings.Contains(string(data), s) {
				t.Errorf("%s in the zip holds %q", f.Name, s)
			}
		}
		if strings.Contains(string(data), "***") {
			t.Errorf("%s in the zip holds a masked value, which would break it:\n%s", f.Name, data)
		}
		for _, m := range refs.FindAllStringSubmatch(string(data), -1) {
			if m[1] != "CLAUDE_PLUGIN_ROOT" && !slices.Contains(info.RequiredEnv, m[1]) {
				t.Errorf("%s references %s, not in requiredEnv %q", f.Name, m[0], info.RequiredEnv)
			}
		}
	}
	for file, want := range map[string][]string{
		"hooks/hooks.json": {
			`Authorization: Bearer ${HOOK_AUTH_TOKEN}`,
			`notify?token=${HOOK_TOKEN}&event=write`,
			`"command": "ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY} node ${CLAUDE_PLUGIN_ROOT}/hooks/check.js"`,
			`--password \"${HOOK_PASSWORD}\" -e 'insert into runs values (1)'`,
			// exec form with a credential: the same command line in bash form
			`"command": "'${CLAUDE_PLUGIN_ROOT}/hooks/report' '--api-key' \"${HOOK_API_KEY}\" '--verbose'"`,
			`"shell": "bash"`,
		},
		".mcp.json": {
			`"--password",
        "${DB_PASSWORD}",`,
			`"https://${DB_URL_CREDENTIALS}@db.example.com/app"`,
			`"DB_API_TOKEN": "${DB_API_TOKEN}"`,
			`"url": "https://api.example.com/mcp?access_token=${API_ACCESS_TOKEN}&team=core"`,
			`"X-Api-Key": "${API_X_API_KEY}"`,
		},
	} {
		for _, w := range want {
			if !strings.Contains(files[file], w) {
				t.Errorf("%s lacks %s:\n%s", file, w, files[file])
			}
		}
	}

	zipPath := filepath.Join(t.TempDir(), "secret-hooks.zip")
	if err := os.WriteFile(zipPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	other := newEnv(t)
	again, err := other.install(Request{Source: mustSource(zipPath)}, Approval{Yes: true})
	if err != nil || !again.Applied {
		t.Fatalf("install exported zip: %v %+v", err, again)
	}
	if got, want := len(again.Actions[0].Hooks), len(resp.Actions[0].Hooks); got != want {
		t.Errorf("reinstalled plugin has %d hooks, want %d", got, want)
	}
}

// mustSource is source.FromText for a source a test names itself: it
// panics on an error, as regexp.MustCompile does.
func mustSource(text string) source.Source {
	s, err := source.FromText(text)
	if err != nil {
		panic(err)
	}
	return s
}
