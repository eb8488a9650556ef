package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestStripCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		path        string
		in          string
		want        string // exact output when changed; "" means unchanged
		wantEnv     []string
		wantChanged bool
	}{
		{
			name: "mcp.json literal env and header",
			path: ".mcp.json",
			in: `{"mcpServers": {"github": {"command": "npx", "args": ["-y", "server-github"],
				"env": {"GITHUB_TOKEN": "ghp_0123456789abcdefghij", "LOG": "${LOG_LEVEL}", "EMPTY": ""}},
				"docs": {"type": "http", "url": "https://u:p@docs.example.com/mcp?api_key=zzz&lang=en",
				"headers": {"Authorization": "Bearer sk-live-1", "X-Api-Key": "k", "X-Ref": "${DOCS_REF}"}}}}`,
			want: `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": [
        "-y",
        "server-github"
      ],
      "env": {
        "GITHUB_TOKEN": "${GITHUB_TOKEN}",
        "LOG": "${LOG_LEVEL}",
        "EMPTY": ""
      }
    },
    "docs": {
      "type": "http",
      "url": "https://***@docs.example.com/mcp?api_key=***&lang=en",
      "headers": {
        "Authorization": "Bearer ${DOCS_AUTHORIZATION}",
        "X-Api-Key": "${DOCS_X_API_KEY}",
        "X-Ref": "${DOCS_REF}"
      }
    }
  }
}
`,
			wantEnv:     []string{"DOCS_AUTHORIZATION", "DOCS_REF", "DOCS_X_API_KEY", "GITHUB_TOKEN", "LOG_LEVEL"},
			wantChanged: true,
		},
		{
			name:        "bare map and odd env key",
			path:        "servers.json",
			in:          `{"db": {"command": "db", "env": {"db-password": "p4ss"}, "args": ["--password", "p4ss"]}}`,
			want:        "{\n  \"db\": {\n    \"command\": \"db\",\n    \"env\": {\n      \"db-password\": \"${DB_PASSWORD}\"\n    },\n    \"args\": [\n      \"--password\",\n      \"***\"\n    ]\n  }\n}\n",
			wantEnv:     []string{"DB_PASSWORD"},
			wantChanged: true,
		},
		{
			name: "settings.json env and hook env",
			path: ".claude/settings.json",
			in:   `{"env": {"API_KEY": "abc"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "env": {"HOOK_SECRET": "s"}}]}]}}`,
			want: `{
  "env": {
    "API_KEY": "${API_KEY}"
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "x",
            "env": {
              "HOOK_SECRET": "${HOOK_SECRET}"
            }
          }
        ]
      }
    ]
  }
}
`,
			wantEnv:     []string{"API_KEY", "HOOK_SECRET"},
			wantChanged: true,
		},
		{
			name:        "already clean",
			path:        ".mcp.json",
			in:          `{"mcpServers":{"a":{"command":"x","env":{"T":"${T}","ROOT":"${CLAUDE_PLUGIN_ROOT}"},"headers":{"Authorization":"Bearer ${A_TOKEN}"}}}}`,
			wantEnv:     []string{"A_TOKEN", "T"},
			wantChanged: false,
		},
		{
			name:        "nothing credential-like",
			path:        ClaudeManifest,
			in:          `{"name":"x","author":{"name":"A","url":"https://example.com"},"keywords":["a"]}`,
			wantEnv:     []string{},
			wantChanged: false,
		},
		{
			name:        "native runtime env keeps numbers and order",
			path:        NativeManifest,
			in:          `{"apiVersion":"reasonix.io/plugin/v2","name":"x","runtime":{"command":"c","priority":10,"env":{"Z_KEY":"z","A_KEY":"a"}}}`,
			want:        "{\n  \"apiVersion\": \"reasonix.io/plugin/v2\",\n  \"name\": \"x\",\n  \"runtime\": {\n    \"command\": \"c\",\n    \"priority\": 10,\n    \"env\": {\n      \"Z_KEY\": \"${Z_KEY}\",\n      \"A_KEY\": \"${A_KEY}\"\n    }\n  }\n}\n",
			wantEnv:     []string{"A_KEY", "Z_KEY"},
			wantChanged: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, env, changed, err := StripCredentials(tc.path, []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if !reflect.DeepEqual(env, tc.wantEnv) {
				t.Errorf("requiredEnv = %q, want %q", env, tc.wantEnv)
			}
			want := tc.want
			if !tc.wantChanged {
				want = tc.in
			}
			if string(out) != want {
				t.Errorf("out =\n%s\nwant\n%s", out, want)
			}
			if !json.Valid(out) {
				t.Errorf("output is not JSON")
			}
			// Stripping is idempotent: the result has nothing left to strip.
			again, _, changedAgain, err := StripCredentials(tc.path, out)
			if err != nil || changedAgain || string(again) != string(out) {
				t.Errorf("second pass changed the document: %v\n%s", err, again)
			}
		})
	}
	if _, _, _, err := StripCredentials(".mcp.json", []byte("{\n  \"a\": [1,\n}")); err == nil || !strings.Contains(err.Error(), ".mcp.json is not valid JSON at line 3") {
		t.Errorf("malformed input: %v", err)
	}
}

// TestExportFixtures strips every credential file of the fixture packages
// and checks no literal secret survives and a stripped native manifest still
// loads.
func TestExportFixtures(t *testing.T) {
	t.Parallel()
	secrets := []string{"ghp_", "sk-live", "sk-abcdef", "hunter2", "abc123", "zzz999", "literal-guard-secret", "plain-secret-value"}
	for _, fixture := range []string{"native", "claude", "codex"} {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join("testdata", fixture)
			p, err := Load(src, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			dst := t.TempDir()
			if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			for _, rel := range CredentialFiles(p) {
				data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(rel)))
				if err != nil {
					t.Fatal(err)
				}
				out, _, _, err := StripCredentials(rel, data)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range secrets {
					if strings.Contains(string(out), s) {
						t.Errorf("%s still holds %q after stripping", rel, s)
					}
				}
				if err := os.WriteFile(filepath.Join(dst, filepath.FromSlash(rel)), out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			q, err := Load(dst, LoadOptions{})
			if err != nil {
				t.Fatalf("stripped package no longer loads: %v", err)
			}
			if q.Counts() != p.Counts() {
				t.Errorf("inventory changed: %s vs %s", q.Counts(), p.Counts())
			}
		})
	}
}
