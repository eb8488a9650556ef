package manifest

import (
	"testing"

	"reasonix.io/plugind"
)

// TestInstallRefusesWhatValidateCalls: the install path (Load) refuses a
// Claude plugin that `reasonix plugin validate` calls invalid, naming the
// field, where it used to install it with the offending part skipped.
func TestInstallRefusesWhatValidateCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		manifest string
		files    map[string]string
		want     []string
	}{
		{name: "agents directory", manifest: `{"name": "kit", "agents": ["./agents"]}`,
			files: map[string]string{"agents/helper.md": "---\ndescription: d\n---\n"}, want: []string{"agents[0]", ".md"}},
		{name: "declared path missing", manifest: `{"name": "kit", "agents": ["./agents/x.md"]}`,
			files: map[string]string{"skills/a/SKILL.md": "x"}, want: []string{"agents[0]", "does not exist"}},
		{name: "dotdot path", manifest: `{"name": "kit", "skills": "../elsewhere"}`,
			files: map[string]string{"commands/c.md": "x"}, want: []string{"skills", `"../elsewhere"`}},
		{name: "absolute path", manifest: `{"name": "kit", "commands": ["/etc/passwd"]}`,
			files: map[string]string{"commands/c.md": "x"}, want: []string{"commands[0]", `"./"`}},
		{name: "skills entry naming SKILL.md", manifest: `{"name": "kit", "skills": ["./extra/solo/SKILL.md"]}`,
			files: map[string]string{"extra/solo/SKILL.md": "---\ndescription: Solo\n---\n"}, want: []string{"skills[0]", `"extra/solo"`}},
		{name: "null field", manifest: `{"name": "kit", "version": null}`,
			files: map[string]string{"skills/a/SKILL.md": "x"}, want: []string{"version", "null"}},
		{name: "inline hooks with an unknown event", manifest: `{"name": "kit", "hooks": {"OnSave": [{"hooks": [{"type": "command", "command": "x"}]}]}}`,
			files: map[string]string{"skills/a/SKILL.md": "x"}, want: []string{"hooks.OnSave"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{ClaudeManifest: tc.manifest}
			for k, v := range tc.files {
				files[k] = v
			}
			_, err := Load(layout(t, files, nil), LoadOptions{})
			wantError(t, err, append([]string{ClaudeManifest, "reasonix plugin validate"}, tc.want...)...)
			if plugind.CodeOf(err) != plugind.CodeInvalidSource {
				t.Errorf("code %q", plugind.CodeOf(err))
			}
		})
	}
	// What validate only warns about still installs.
	files := map[string]string{
		ClaudeManifest:      `{"name": "kit", "tier": "gold", "binaries": {"Bad": {}}, "experimental": 1}`,
		"skills/a/SKILL.md": "no front matter",
		"hooks/hooks.json":  `{"SessionStart": [{"hooks": [{"type": "command", "command": "x"}]}]}`,
	}
	if _, err := Load(layout(t, files, nil), LoadOptions{}); err != nil {
		t.Errorf("warnings refused the install: %v", err)
	}
}
