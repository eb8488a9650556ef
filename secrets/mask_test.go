package secrets

import (
	"reflect"
	"testing"
)

// A URL field (an MCP server's url) is masked as any text is.
func TestMaskURLField(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://mcp.example.com/v1", "https://mcp.example.com/v1"},
		{"https://user:pass@mcp.example.com/v1", "https://***@mcp.example.com/v1"},
		{"ssh://git@git.example.test/team/x.git", "ssh://git@git.example.test/team/x.git"}, // an SSH user is an account name
		{"SSH://alice:pw@git.example.test/x", "SSH://***@git.example.test/x"},
		{"ssh+git://tok@h/x", "ssh+git://***@h/x"},
		{"https://tok@host", "https://***@host"},
		{"https://${USER}:${PASS}@host/x", "https://${USER}:${PASS}@host/x"},
		{"https://h/p?access_token=abc&team=core", "https://h/p?access_token=***&team=***"},
		{"https://h/p?apiKey=abc&X-Amz-Signature=ff&page=2", "https://h/p?apiKey=***&X-Amz-Signature=***&page=***"},
		{"https://h/p?q=ghp_0123456789abcdefghij", "https://h/p?q=***"},
		{"https://h/p?token=${TOKEN}", "https://h/p?token=${TOKEN}"},
		{"https://h/p?token=", "https://h/p?token="},
		{"https://h/cb#access_token=xyz&state=1", "https://h/cb#access_token=***&state=***"},
		{"https://h/p#section-2", "https://h/p#section-2"},
		{"https://h/a@b/c", "https://h/a@b/c"}, // an @ in the path is not userinfo
		{"${MCP_URL}", "${MCP_URL}"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMaskValue(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"literal", Masked},
		{"production", Masked},
		{"", ""},
		{"${TOKEN}", "${TOKEN}"},
		{"$TOKEN", "$TOKEN"},
		{"Bearer ${TOKEN}", "Bearer ${TOKEN}"},
		{"${user_config.api_key}", "${user_config.api_key}"},
		{"Bearer sk-literal", Masked},
		{"prefix-${X}-abc123", Masked},
	}
	for _, tc := range tests {
		if got := MaskValues(map[string]string{"K": tc.in})["K"]; got != tc.want {
			t.Errorf("MaskValues({K: %q}) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMaskArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in, want []string
	}{
		{"nil", nil, nil},
		{"plain", []string{"-y", "@scope/server", "--port", "8080"}, []string{"-y", "@scope/server", "--port", "8080"}},
		{"flag then value", []string{"--api-key", "abc", "--verbose"}, []string{"--api-key", Masked, "--verbose"}},
		{"flag=value", []string{"--token=abc", "--name=x"}, []string{"--token=" + Masked, "--name=x"}},
		{"reference kept", []string{"--token", "${TOKEN}", "--password=$PW"}, []string{"--token", "${TOKEN}", "--password=$PW"}},
		{"flag followed by flag", []string{"--auth", "--other"}, []string{"--auth", "--other"}},
		{"known token literal", []string{"ghp_0123456789abcdefghij"}, []string{Masked}},
		{"url arg", []string{"https://u:p@h/x?key=1"}, []string{"https://***@h/x?key=***"}},
		{"env assignment", []string{"env", "API_KEY=abc", "PORT=1"}, []string{"env", "API_KEY=" + Masked, "PORT=1"}},
	}
	for _, tc := range tests {
		if got := MaskArgs(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: MaskArgs(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestMaskCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, shell, want string
		shellForm             bool
	}{
		{"bearer header", `curl -s -H "Authorization: Bearer abc123" https://api.example.com/hook`, "", `curl -s -H "Authorization: Bearer ***" https://api.example.com/hook`, true},
		{"query token", `curl "https://h.example.com/notify?token=abc&x=1"`, "", `curl "https://h.example.com/notify?token=***&x=***"`, true},
		{"env prefix", `ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz node hook.js`, "", `ANTHROPIC_API_KEY=*** node hook.js`, true},
		{"flag value", `mysql --user root --password hunter2 -e 'select 1'`, "", `mysql --user root --password *** -e 'select 1'`, true},
		{"quoted flag value", `tool --api-key 'a b c' run`, "", `tool --api-key *** run`, true},
		{"curl user", `curl -u admin:s3cret https://h`, "", `curl -u *** https://h`, true},
		{"flag before separator", `tool --token; echo hi`, "", `tool --token; echo hi`, true},
		{"flag reference", `tool --token "$TOKEN" --password=${PW}`, "", `tool --token "$TOKEN" --password=${PW}`, true},
		{"url userinfo", `git clone https://me:ghp_0123456789abcdefghij@github.com/o/r`, "", `git clone https://***@github.com/o/r`, true},
		{"plain", `${CLAUDE_PLUGIN_ROOT}/hooks/fmt.sh --check "$FILE"`, "", `${CLAUDE_PLUGIN_ROOT}/hooks/fmt.sh --check "$FILE"`, true},
		{"powershell", `Invoke-RestMethod -Headers @{Authorization='Bearer abc123'} -Uri https://h`, "powershell", `Invoke-RestMethod -Headers @{Authorization='Bearer ***'} -Uri https://h`, true},
		{"exec form executable", `https://u:p@h/bin`, "", `https://***@h/bin`, false},
		{"exec form keeps words", `tool --password`, "", `tool --password`, false},
	}
	for _, tc := range tests {
		got := MaskCommand(tc.in, tc.shellForm, tc.shell)
		if got != tc.want {
			t.Errorf("%s: MaskCommand(%q)\n got %q\nwant %q", tc.name, tc.in, got, tc.want)
		}
		if again := MaskCommand(got, tc.shellForm, tc.shell); again != got {
			t.Errorf("%s: not idempotent: %q", tc.name, again)
		}
	}
}
