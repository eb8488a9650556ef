package secrets

import (
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/jsondoc"
)

// stripJSON is Strip over a JSON document's text: data itself when
// nothing changed, else the re-indented document.
func stripJSON(t testing.TB, data []byte) ([]byte, []string, bool, error) {
	t.Helper()
	doc, _, err := jsondoc.Parse(data)
	if err != nil {
		return nil, nil, false, err
	}
	vars, changed := Strip(doc)
	if !changed {
		return data, vars, false, nil
	}
	return doc.Marshal(), vars, true, nil
}

func TestStrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		in          string
		want        string // exact output when changed; "" means unchanged
		wantEnv     []string
		wantChanged bool
	}{
		{
			name: "mcp.json literal env and header",
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
      "url": "https://${DOCS_URL_CREDENTIALS}@docs.example.com/mcp?api_key=${DOCS_API_KEY}&lang=en",
      "headers": {
        "Authorization": "Bearer ${DOCS_AUTHORIZATION}",
        "X-Api-Key": "${DOCS_X_API_KEY}",
        "X-Ref": "${DOCS_REF}"
      }
    }
  }
}
`,
			wantEnv:     []string{"DOCS_API_KEY", "DOCS_AUTHORIZATION", "DOCS_REF", "DOCS_URL_CREDENTIALS", "DOCS_X_API_KEY", "GITHUB_TOKEN", "LOG_LEVEL"},
			wantChanged: true,
		},
		{
			name:        "bare map and odd env key",
			in:          `{"db": {"command": "db", "env": {"db-password": "p4ss"}, "args": ["--password", "p4ss"]}}`,
			want:        "{\n  \"db\": {\n    \"command\": \"db\",\n    \"env\": {\n      \"db-password\": \"${DB_PASSWORD}\"\n    },\n    \"args\": [\n      \"--password\",\n      \"${DB_PASSWORD}\"\n    ]\n  }\n}\n",
			wantEnv:     []string{"DB_PASSWORD"},
			wantChanged: true,
		},
		{
			name: "settings.json env and hook env",
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
			// The scheme word is the detection's: every scheme it knows
			// stays visible, and a tab after it is no separator.
			name:        "auth schemes",
			in:          `{"s":{"headers":{"Authorization":"Negotiate YIIabc","Proxy-Authorization":"Basic\tZm9v"}}}`,
			want:        "{\n  \"s\": {\n    \"headers\": {\n      \"Authorization\": \"Negotiate ${S_AUTHORIZATION}\",\n      \"Proxy-Authorization\": \"${S_PROXY_AUTHORIZATION}\"\n    }\n  }\n}\n",
			wantEnv:     []string{"S_AUTHORIZATION", "S_PROXY_AUTHORIZATION"},
			wantChanged: true,
		},
		{
			name:        "already clean",
			in:          `{"mcpServers":{"a":{"command":"x","env":{"T":"${T}","ROOT":"${CLAUDE_PLUGIN_ROOT}"},"headers":{"Authorization":"Bearer ${A_TOKEN}"}}}}`,
			wantEnv:     []string{"A_TOKEN", "T"},
			wantChanged: false,
		},
		{
			name:        "nothing credential-like",
			in:          `{"name":"x","author":{"name":"A","url":"https://example.com"},"keywords":["a"]}`,
			wantEnv:     []string{},
			wantChanged: false,
		},
		{
			name:        "native runtime env keeps numbers and order",
			in:          `{"apiVersion":"reasonix.io/plugin/v2","name":"x","runtime":{"command":"c","priority":10,"env":{"Z_KEY":"z","A_KEY":"a"}}}`,
			want:        "{\n  \"apiVersion\": \"reasonix.io/plugin/v2\",\n  \"name\": \"x\",\n  \"runtime\": {\n    \"command\": \"c\",\n    \"priority\": 10,\n    \"env\": {\n      \"Z_KEY\": \"${Z_KEY}\",\n      \"A_KEY\": \"${A_KEY}\"\n    }\n  }\n}\n",
			wantEnv:     []string{"A_KEY", "Z_KEY"},
			wantChanged: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, env, changed, err := stripJSON(t, []byte(tc.in))
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
			again, _, changedAgain, err := stripJSON(t, out)
			if err != nil || changedAgain || string(again) != string(out) {
				t.Errorf("second pass changed the document: %v\n%s", err, again)
			}
		})
	}
}

// TestStripHookCommands checks that credential text in hook commands and
// arguments becomes a reference the hook's own shell expands where the
// literal stood, quoted as its context needs.
func TestStripHookCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		hook    string // one hook object
		want    string // its command, or args joined by " | "
		wantEnv []string
	}{
		{"bearer in double quotes", `{"type":"command","command":"curl -H \"Authorization: Bearer abc123\" https://h/x"}`,
			`curl -H "Authorization: Bearer ${HOOK_AUTH_TOKEN}" https://h/x`, []string{"HOOK_AUTH_TOKEN"}},
		{"bearer in single quotes", `{"type":"command","command":"curl -H 'Authorization: Bearer abc123' https://h/x"}`,
			`curl -H 'Authorization: Bearer '"${HOOK_AUTH_TOKEN}"'' https://h/x`, []string{"HOOK_AUTH_TOKEN"}},
		{"pair in single quotes", `{"type":"command","command":"curl 'https://h/notify?token=abc&x=1'"}`,
			`curl 'https://h/notify?token='"${HOOK_TOKEN}"'&x=1'`, []string{"HOOK_TOKEN"}},
		{"query token", `{"type":"command","command":"curl https://h/notify?token=abc&x=1"}`,
			`curl https://h/notify?token=${HOOK_TOKEN}&x=1`, []string{"HOOK_TOKEN"}},
		{"env prefix keeps its name", `{"type":"command","command":"ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz node hook.js"}`,
			`ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY} node hook.js`, []string{"ANTHROPIC_API_KEY"}},
		{"flag value", `{"type":"command","command":"mysql --password 'hunter 2' -e 'select 1'"}`,
			`mysql --password "${HOOK_PASSWORD}" -e 'select 1'`, []string{"HOOK_PASSWORD"}},
		{"same secret twice, one name", `{"type":"command","command":"a --token t0k && b --token t0k && c --token other9"}`,
			`a --token "${HOOK_TOKEN}" && b --token "${HOOK_TOKEN}" && c --token "${HOOK_TOKEN_2}"`, []string{"HOOK_TOKEN", "HOOK_TOKEN_2"}},
		{"well-known token", `{"type":"command","command":"gh api -H 'x' --input f ghp_0123456789abcdefghij"}`,
			`gh api -H 'x' --input f ${GITHUB_TOKEN}`, []string{"GITHUB_TOKEN"}},
		{"powershell single quotes", `{"type":"command","shell":"powershell","command":"irm -Headers @{Authorization='Bearer abc123'} -Uri 'https://h/$x'"}`,
			"irm -Headers @{Authorization=\"Bearer ${env:HOOK_AUTH_TOKEN}\"} -Uri 'https://h/$x'", []string{"HOOK_AUTH_TOKEN"}},
		{"powershell escapes the rest", `{"type":"command","shell":"pwsh","command":"x 'it''s $a Bearer x9y8z7w6 \"q\"'"}`,
			"x \"it's `$a Bearer ${env:HOOK_AUTH_TOKEN} `\"q`\"\"", []string{"HOOK_AUTH_TOKEN"}},
		{"cmd", `{"type":"command","shell":"cmd","command":"curl -H \"Authorization: Bearer abc123\" https://h?key=k1"}`,
			`curl -H "Authorization: Bearer %HOOK_AUTH_TOKEN%" https://h?key=%HOOK_KEY%`, []string{"HOOK_AUTH_TOKEN", "HOOK_KEY"}},
		// Exec form passes arguments literally: a reference there would not
		// expand, so the hook becomes the same command line in bash form.
		{"exec args", `{"type":"command","command":"tool","args":["--api-key","k-literal","--url","https://u:p@h/x?sig=s1"]}`,
			`'tool' '--api-key' "${HOOK_API_KEY}" '--url' 'https://'"${HOOK_URL_CREDENTIALS}"'@h/x?sig='"${HOOK_SIG}"`, []string{"HOOK_API_KEY", "HOOK_SIG", "HOOK_URL_CREDENTIALS"}},
		{"exec args without credentials stay exec form", `{"type":"command","command":"tool","args":["--verbose","x"]}`,
			`--verbose | x`, []string{}},
		{"references left alone", `{"type":"command","command":"curl -H \"Authorization: Bearer ${API_TOKEN}\" \"https://h?token=$T\""}`,
			`curl -H "Authorization: Bearer ${API_TOKEN}" "https://h?token=$T"`, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[` + tc.hook + `]}]}}`
			out, env, _, err := stripJSON(t, []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			var parsed struct {
				Hooks map[string][]struct {
					Hooks []struct {
						Command string   `json:"command"`
						Args    []string `json:"args"`
					} `json:"hooks"`
				} `json:"hooks"`
			}
			if err := json.Unmarshal(out, &parsed); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out)
			}
			h := parsed.Hooks["PreToolUse"][0].Hooks[0]
			got := h.Command
			if h.Args != nil {
				got = strings.Join(h.Args, " | ")
			}
			if got != tc.want {
				t.Errorf("command\n got %s\nwant %s", got, tc.want)
			}
			if !reflect.DeepEqual(env, tc.wantEnv) {
				t.Errorf("requiredEnv = %q, want %q", env, tc.wantEnv)
			}
			again, _, changed, err := stripJSON(t, out)
			if err != nil || changed {
				t.Errorf("second pass changed the document: %v\n%s", err, again)
			}
		})
	}
}

// TestStrippedShellCommandsStillWork runs hook commands before and after
// export under bash, with the required variables set to the literals they
// replaced: the command must receive exactly the same arguments.
func TestStrippedShellCommandsStillWork(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	tests := []struct {
		command string
		env     map[string]string
	}{
		{`printf '<%s>\n' -H "Authorization: Bearer abc123" x`, map[string]string{"HOOK_AUTH_TOKEN": "abc123"}},
		{`printf '<%s>\n' -H 'Authorization: Bearer abc123' 'X-Api-Key: k-9 z'`, map[string]string{"HOOK_AUTH_TOKEN": "abc123", "HOOK_X_API_KEY": "k-9 z"}},
		{`printf '<%s>\n' https://h/notify?token=abc\&x=1 'https://h/?access_token=t0k'`, map[string]string{"HOOK_TOKEN": "abc", "HOOK_ACCESS_TOKEN": "t0k"}},
		{`ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz sh -c 'printf "<%s>\n" "$ANTHROPIC_API_KEY"'`, map[string]string{"ANTHROPIC_API_KEY": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}},
		{`printf '<%s>\n' --password 'hunter 2' --token=t0k "--api-key=a b"`, map[string]string{"HOOK_PASSWORD": "hunter 2", "HOOK_TOKEN": "t0k", "HOOK_API_KEY": "a b"}},
		{`printf '<%s>\n' https://me:pw@h/x ghp_0123456789abcdefghij`, map[string]string{"HOOK_URL_CREDENTIALS": "me:pw", "GITHUB_TOKEN": "ghp_0123456789abcdefghij"}},
	}
	for _, tc := range tests {
		doc, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": tc.command}}}}}})
		out, env, changed, err := stripJSON(t, doc)
		if err != nil || !changed {
			t.Fatalf("%s: changed=%v err=%v", tc.command, changed, err)
		}
		var parsed struct {
			Hooks map[string][]struct {
				Hooks []struct{ Command string } `json:"hooks"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(out, &parsed); err != nil {
			t.Fatal(err)
		}
		stripped := parsed.Hooks["Stop"][0].Hooks[0].Command
		for name, literal := range tc.env {
			if !slices.Contains(env, name) {
				t.Errorf("%s: requiredEnv %q lacks %s", tc.command, env, name)
			}
			if strings.Contains(stripped, literal) {
				t.Errorf("%s: stripped command still holds %q: %s", tc.command, literal, stripped)
			}
		}
		run := func(command string, extra map[string]string) string {
			cmd := exec.Command(bash, "-c", command)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			for k, v := range extra {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bash -c %s: %v\n%s", command, err, b)
			}
			return string(b)
		}
		if before, after := run(tc.command, nil), run(stripped, tc.env); before != after {
			t.Errorf("%s\nexported as %s\nprints %q, want %q", tc.command, stripped, after, before)
		}
	}
}

// FuzzStripHookCommand checks, for any hook command in any shell, that
// export is idempotent (what it wrote has nothing left to strip) and that
// the displayed command holds nothing credential-like.
func FuzzStripHookCommand(f *testing.F) {
	for _, s := range []string{
		`curl -H "Authorization: Bearer abc123" https://h/x?token=abc`,
		`curl -H 'Authorization: Bearer abc123' -u a:b https://u:p@h`,
		`ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz node x.js --password 'a b' --token=t`,
		`x 'it''s Bearer x9y8z7w6' "--api-key=a b" \"token=q\"`,
	} {
		for _, shell := range []string{"", "powershell", "cmd"} {
			f.Add(s, shell)
		}
	}
	f.Fuzz(func(t *testing.T, command, shell string) {
		doc, err := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": command, "shell": shell}}}}}})
		if err != nil {
			return
		}
		out, _, _, err := stripJSON(t, doc)
		if err != nil {
			t.Fatal(err)
		}
		again, _, changed, err := stripJSON(t, out)
		if err != nil || changed {
			t.Fatalf("export of %q (shell %q) is not stable:\n%s\n%s", command, shell, out, again)
		}
		shown := MaskCommand(command, true, shell)
		if sp := find(shown, display); len(sp) != 0 {
			t.Fatalf("MaskCommand(%q) = %q still shows %q", command, shown, shown[sp[0].Start:sp[0].End])
		}
	})
}

// An exec-form hook whose arguments held a credential still runs the same
// program with the same arguments once exported: bash expands the
// references the export wrote.
func TestExportedExecHookRunsTheSame(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("skipped: bash is not installed")
	}
	args := []string{"%s|", "--token", "s3cr3t value'9", "--url", "https://u:p@h/x?sig=s1", "plain"}
	orig, err := exec.Command("printf", args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": "printf", "args": args}}}}}})
	out, env, changed, err := stripJSON(t, raw)
	if err != nil || !changed {
		t.Fatalf("strip: %v %v", err, changed)
	}
	var parsed struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string   `json:"command"`
				Shell   string   `json:"shell"`
				Args    []string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(out, &parsed); err != nil {
		t.Fatal(err)
	}
	h := parsed.Hooks["Stop"][0].Hooks[0]
	if h.Shell != "bash" || h.Args != nil || strings.Contains(h.Command, "s3cr3t") {
		t.Fatalf("exported hook %+v", h)
	}
	cmd := exec.Command(bash, "-c", h.Command)
	cmd.Env = append(os.Environ(), "HOOK_TOKEN=s3cr3t value'9", "HOOK_URL_CREDENTIALS=u:p", "HOOK_SIG=s1")
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("run %q: %v", h.Command, err)
	}
	if string(got) != string(orig) {
		t.Errorf("exported hook printed %q, the original %q (env %v)", got, orig, env)
	}
}
