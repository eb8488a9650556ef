package manifest

import (
	"encoding/json"
	"strings"
	"testing"
)

// fixtureSecrets are the literal credentials of testdata/claude-secrets.
var fixtureSecrets = []string{
	"abc123hooksecret", "tokhooksecret", "sk-ant-api03-hooksecretvalue0123456789", "hunter2hooksecret",
	"argsecret-literal-1", "mcpargsecret9", "dbpass9secret", "urlsecret9", "envsecret9value", "headersecret9",
}

// TestSecretFixtureDisplay checks the inventory every display surface
// prints (plans, show, list --json, GET /plugins) holds none of the
// fixture's credentials, and still shows what each hook runs.
func TestSecretFixtureDisplay(t *testing.T) {
	t.Parallel()
	p, err := Load("testdata/claude-secrets", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fixtureSecrets {
		if strings.Contains(string(data), s) {
			t.Errorf("inventory shows %q", s)
		}
	}
	var commands []string
	for _, h := range p.Hooks {
		commands = append(commands, h.Command+" "+strings.Join(h.Args, " "))
	}
	want := []string{
		`curl -s -H "Authorization: Bearer ***" "https://hooks.example.com/notify?token=***&event=***" `,
		`ANTHROPIC_API_KEY=*** node ${CLAUDE_PLUGIN_ROOT}/hooks/check.js `,
		`mysql --user app --password *** -e 'insert into runs values (1)' `,
		`${CLAUDE_PLUGIN_ROOT}/hooks/report --api-key *** --verbose`,
	}
	if strings.Join(commands, "\n") != strings.Join(want, "\n") {
		t.Errorf("hook commands:\n%s\nwant\n%s", strings.Join(commands, "\n"), strings.Join(want, "\n"))
	}
	if len(p.MCPServers) != 2 {
		t.Fatalf("mcpServers = %+v", p.MCPServers)
	}
	for _, s := range p.MCPServers {
		switch s.Name {
		case "db":
			if got := strings.Join(s.Args, " "); got != "--password *** --dsn https://***@db.example.com/app --read-only" {
				t.Errorf("db args = %q", got)
			}
		case "api":
			if s.URL != "https://api.example.com/mcp?access_token=***&team=***" {
				t.Errorf("api url = %q", s.URL)
			}
		}
	}
}
