package parity

import (
	"reflect"
	"strings"
	"testing"
)

const detailsPlain = "\x1b[1mplain 1.2.3\x1b[0m\n  plain\n  Source: plain@m\n\nComponent inventory\n" +
	"  Skills (2)  plain-cmd, plain-skill\n  Agents (1)  plain-agent\n" +
	"  Hooks (2)  PreToolUse, Stop  (harness-only \u2014 no model context cost)\n" +
	"  MCP servers (1)  srv  (tool schemas resolved at runtime; not counted)\n" +
	"  LSP servers (0)\n\nProjected token cost\n  Always-on:   ~7 tok\n"

func TestParseDetails(t *testing.T) {
	t.Parallel()
	inv := func(lines ...string) string {
		return strings.Join(append([]string{"", "Component inventory"}, lines...), "\n") + "\n\n"
	}
	empty := inv("  Skills (0)", "  Agents (0)", "  Hooks (0)", "  MCP servers (0)", "  LSP servers (0)")
	tests := []struct {
		name, plugin, out string
		want              *DetailsOutput
		err               string
	}{
		{name: "name and version", plugin: "plain", out: detailsPlain, want: &DetailsOutput{Name: "plain", Version: "1.2.3", Details: Details{
			Skills: []string{"plain-cmd", "plain-skill"}, Agents: []string{"plain-agent"}, Hooks: []string{"PreToolUse", "Stop"},
			MCPServers: []string{"srv"}, LSPServers: []string{}}}},
		{name: "display name", plugin: "de", out: "Nice De (de) 1.0.0" + empty,
			want: &DetailsOutput{Name: "de", DisplayName: "Nice De", Version: "1.0.0", Details: Details{[]string{}, []string{}, []string{}, []string{}, []string{}}}},
		{name: "display name with parentheses, no version", plugin: "x", out: "X (beta) (x)" + empty,
			want: &DetailsOutput{Name: "x", DisplayName: "X (beta)", Details: Details{[]string{}, []string{}, []string{}, []string{}, []string{}}}},
		{name: "no version", plugin: "x", out: "x" + empty,
			want: &DetailsOutput{Name: "x", Details: Details{[]string{}, []string{}, []string{}, []string{}, []string{}}}},
		{name: "the manifest's name", plugin: "x", out: "manifest-name 1.0" + empty,
			want: &DetailsOutput{Name: "manifest-name", Version: "1.0", Details: Details{[]string{}, []string{}, []string{}, []string{}, []string{}}}},
		{name: "a header of another shape", plugin: "x", out: "Some Thing 1.0" + empty, err: `header "Some Thing 1.0" is not`},
		{name: "count and names disagree", plugin: "x", out: "x" + inv("  Skills (3)  a, b", "  Agents (0)", "  Hooks (0)", "  MCP servers (0)", "  LSP servers (0)"),
			err: "Skills says 3 but lists 2 names"},
		{name: "a line missing", plugin: "x", out: "x" + inv("  Skills (0)", "  Agents (0)", "  Hooks (0)", "  MCP servers (0)"), err: "no LSP servers line"},
		{name: "unknown line", plugin: "x", out: "x" + inv("  Widgets (0)"), err: "unexpected inventory line"},
		{name: "empty", plugin: "x", out: "\n\n", err: "empty output"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDetails(tc.plugin, tc.out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseInstall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out string
		exit      int
		want      InstallOutput
	}{
		{name: "installed", out: "Installing plugin \"p@m\"...\u2714 Successfully installed plugin: p@m (scope: user)\n",
			want: InstallOutput{}},
		{name: "disabled by default", out: "\u2714 Successfully installed plugin: p@m (scope: user). This plugin is disabled by default \u2014 enable it with: claude plugin enable p@m\n",
			want: InstallOutput{DisabledByDefault: true}},
		{name: "refused", exit: 1, out: "Installing plugin \"p@m\"...\u2718 Failed to install plugin \"p@m\": Plugin x has an invalid manifest file.\n\nValidation errors: agents: Invalid input\n",
			want: InstallOutput{Exit: 1, Error: "Plugin x has an invalid manifest file. Validation errors: agents: Invalid input"}},
		{name: "other failure", exit: 1, out: "  something\n  broke\n", want: InstallOutput{Exit: 1, Error: "something broke"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseInstall("p@m", tc.exit, tc.out); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	p := Placeholders{{"/tmp/w", "<work>"}, {"/tmp/w/home", "<home>"}}
	got := p.Apply("at /tmp/w/home/.claude/plugins/cache/temp_local_1796134234891_vurh6k/x and /tmp/w/logs")
	want := "at <home>/.claude/plugins/cache/temp_<id>/x and <work>/logs"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
