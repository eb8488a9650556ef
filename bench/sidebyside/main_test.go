package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir, "acme-market", 3); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".claude-plugin", "marketplace.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m marketplace
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Name != "acme-market" || len(m.Plugins) != 3 || m.Plugins[2].Source != "./plugins/p3" {
		t.Fatalf("marketplace = %+v", m)
	}
	for _, rel := range []string{"plugins/p3/.claude-plugin/plugin.json", "plugins/p3/skills/s3/SKILL.md", "plugins/p3/commands/c3.md"} {
		if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			t.Error(err)
		}
	}
	skill, _ := os.ReadFile(filepath.Join(dir, "plugins/p2/skills/s2/SKILL.md"))
	if !strings.HasPrefix(string(skill), "---\nname: s2\n") {
		t.Errorf("SKILL.md = %q", skill)
	}
	if err := generate(dir, "x", 1); err == nil {
		t.Error("generate into a non-empty directory succeeded")
	}
}

func TestCount(t *testing.T) {
	log := strings.Join([]string{
		`time=t level=INFO msg=imported repo=acme/market`,
		`time=t level=INFO msg=request method=GET path=/acme/market.git/info/refs route=git status=200`,
		`time=t level=INFO msg=request method=POST path=/acme/market.git/git-upload-pack route=git status=200`,
		`time=t level=INFO msg=request method=POST path=/acme/market/git-upload-pack route=git status=200`,
		`time=t level=INFO msg=request method=GET path=/api/v3/repos/acme/market/commits/HEAD route=api status=200`,
		`time=t level=INFO msg=request method=GET path=/api/v3/repos/acme/market/commits/HEAD route=api status=304`,
		`time=t level=INFO msg=request method=GET path=/_archive/acme/market/x.tar.gz route=archive status=200`,
		`time=t level=INFO msg=request method=GET path="/odd path" route=other status=404`,
		`time=t level=INFO msg="serving; interrupt to stop" url=http://127.0.0.1:1`,
	}, "\n")
	got, err := count(strings.NewReader(log), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := counts{InfoRefs: 1, UploadPack: 2, API: 2, API304: 1, Archive: 1, Other: 1, Total: 7}
	if got != want {
		t.Fatalf("count = %v, want %v", got, want)
	}
	got, _ = count(strings.NewReader(log), 3)
	if want := (counts{UploadPack: 1, API: 2, API304: 1, Archive: 1, Other: 1, Total: 5}); got != want {
		t.Fatalf("count from line 3 = %v, want %v", got, want)
	}
}

func TestLen(t *testing.T) {
	for _, tc := range []struct{ key, doc, want string }{
		{"plugins", `{"plugins":[{"name":"a"},{"name":"b"}]}`, "2\n"},
		{"plugins", `{"plugins":{"a@m":[],"b@m":[],"c@m":[]}}`, "3\n"},
		{"plugins", `{"other":1}`, "0\n"},
		{".", `[{"id":"p1@m"}]`, "1\n"},
		{".", `[]`, "0\n"},
	} {
		var out strings.Builder
		if err := lenCmd(tc.key, strings.NewReader(tc.doc), &out); err != nil || out.String() != tc.want {
			t.Errorf("len %s %s = %q, %v; want %q", tc.key, tc.doc, out.String(), err, tc.want)
		}
	}
}

func TestResponse(t *testing.T) {
	var out strings.Builder
	doc := `{"ok":false,"status":"refused","applied":false,"actions":[{"status":"blocked"},{"status":"ready"},{"status":"ready"}],"error":"x is \"bad\"","errorCode":"install.invalid_source"}`
	if err := responseCmd(strings.NewReader(doc), &out); err != nil {
		t.Fatal(err)
	}
	want := `ok=false status=refused applied=false actions=3 by_status=blocked:1,ready:2 errorCode=install.invalid_source error="x is \"bad\""` + "\n"
	if out.String() != want {
		t.Fatalf("response = %q, want %q", out.String(), want)
	}
}
