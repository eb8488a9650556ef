package manifest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// StripCredentials' own part: the file is parsed (a malformed one is
// refused by name), data comes back as it was when nothing changed, and a
// changed document is re-indented.
func TestStripCredentials(t *testing.T) {
	t.Parallel()
	if _, _, _, err := StripCredentials(".mcp.json", []byte("{\n  \"a\": [1,\n}")); err == nil || !strings.Contains(err.Error(), ".mcp.json is not valid JSON at line 3") {
		t.Errorf("malformed input: %v", err)
	}
	clean := []byte(`{"mcpServers":{"a":{"command":"x","env":{"T":"${T}"}}}}`)
	out, vars, changed, err := StripCredentials(".mcp.json", clean)
	if err != nil || changed || &out[0] != &clean[0] || !slices.Equal(vars, []string{"T"}) {
		t.Errorf("clean document: out %q vars %q changed %v err %v", out, vars, changed, err)
	}
	out, vars, changed, err = StripCredentials(".mcp.json", []byte(`{"mcpServers":{"a":{"command":"x","env":{"T":"lit"}}}}`))
	want := "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"x\",\n      \"env\": {\n        \"T\": \"${T}\"\n      }\n    }\n  }\n}\n"
	if err != nil || !changed || string(out) != want || !slices.Equal(vars, []string{"T"}) {
		t.Errorf("stripped document: out %q vars %q changed %v err %v", out, vars, changed, err)
	}
}

// TestExportFixtures strips every credential file of the fixture packages
// and checks no literal secret survives and a stripped native manifest still
// loads.
func TestExportFixtures(t *testing.T) {
	t.Parallel()
	secrets := append([]string{"ghp_", "sk-live", "sk-abcdef", "hunter2", "abc123", "zzz999", "literal-guard-secret", "plain-secret-value"}, fixtureSecrets...)
	for _, fixture := range []string{"native", "claude", "codex", "claude-secrets"} {
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
				out, env, _, err := StripCredentials(rel, data)
				if err != nil {
					t.Fatal(err)
				}
				// Every reference the export wrote is one the user is told
				// to set.
				for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`).FindAllStringSubmatch(string(out), -1) {
					if !strings.Contains(string(data), m[0]) && !slices.Contains(env, m[1]) {
						t.Errorf("%s references %s, which requiredEnv %q does not list", rel, m[0], env)
					}
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
