package manifest

import (
	"strings"
	"testing"

	"reasonix.io/plugind"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		files    map[string]string
		links    map[string]string
		wantKind Kind
		wantPath string
		wantErr  []string
	}{
		{name: "native", files: map[string]string{NativeManifest: "{}"}, wantKind: KindReasonix, wantPath: NativeManifest},
		{name: "codex", files: map[string]string{CodexManifest: "{}"}, wantKind: KindCodex, wantPath: CodexManifest},
		{name: "claude", files: map[string]string{ClaudeManifest: "{}"}, wantKind: KindClaude, wantPath: ClaudeManifest},
		{name: "native wins", files: map[string]string{NativeManifest: "{}", CodexManifest: "{}", ClaudeManifest: "{}"}, wantKind: KindReasonix, wantPath: NativeManifest},
		{name: "codex before claude", files: map[string]string{CodexManifest: "{}", ClaudeManifest: "{}"}, wantKind: KindCodex, wantPath: CodexManifest},
		{name: "marketplace only", files: map[string]string{".claude-plugin/marketplace.json": "{}"},
			wantErr: []string{NativeManifest, CodexManifest, ClaudeManifest}},
		{name: "empty", wantErr: []string{"no plugin manifest", NativeManifest, CodexManifest, ClaudeManifest}},
		{name: "manifest is a directory", files: map[string]string{NativeManifest + "/": ""}, wantErr: []string{"no plugin manifest"}},
		{name: "manifest symlink escapes", links: map[string]string{NativeManifest: "OUTSIDE/secret.md"}, wantErr: []string{NativeManifest, "leaves the package root"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			links := map[string]string{}
			for k, v := range tc.links {
				links[k] = strings.Replace(v, "OUTSIDE", outsideDir(t), 1)
			}
			kind, rel, err := Detect(layout(t, tc.files, links))
			if tc.wantErr != nil {
				wantError(t, err, tc.wantErr...)
				return
			}
			if err != nil || kind != tc.wantKind || rel != tc.wantPath {
				t.Errorf("Detect = %q, %q, %v; want %q, %q", kind, rel, err, tc.wantKind, tc.wantPath)
			}
		})
	}
}

func TestDetectUnreadableRoot(t *testing.T) {
	t.Parallel()
	_, _, err := Detect(t.TempDir() + "/missing")
	if plugind.CodeOf(err) != plugind.CodeSourceUnreadable {
		t.Errorf("err = %v (code %q)", err, plugind.CodeOf(err))
	}
	if _, err := Load(t.TempDir(), LoadOptions{}); plugind.CodeOf(err) != plugind.CodeInvalidSource {
		t.Errorf("Load of an empty dir: %v", err)
	}
}

func TestIsFile(t *testing.T) {
	t.Parallel()
	root := layout(t, map[string]string{"a/b.json": "{}", "dir/": ""}, map[string]string{"out.json": "/etc/hostname"})
	for rel, want := range map[string]bool{"a/b.json": true, "dir": false, "missing": false, "out.json": false, "../x": false} {
		if got := IsFile(root, rel); got != want {
			t.Errorf("IsFile(%q) = %v, want %v", rel, got, want)
		}
	}
}
