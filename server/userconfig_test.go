package server

import (
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

const pageSecret = "s3cr3t-PAGE-9b7e"

// userConfigPlugin writes a plugin with userConfig options (a sensitive
// required one, a required one, one with a default) used by an MCP server.
func userConfigPlugin(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "uc")
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name":"uc","version":"1.0.0","description":"Asks for options",
  "userConfig":{
    "api_key":{"type":"string","title":"API key","description":"The service key","required":true,"sensitive":true},
    "endpoint":{"type":"string","title":"Endpoint","description":"Where the service is","required":true},
    "port":{"type":"number","title":"Port","description":"Local port","default":8080,"min":1,"max":65535}
  },
  "mcpServers":{"svc":{"command":"node","args":["server.js","--port","${user_config.port}","--endpoint","${user_config.endpoint}"],"env":{"API_KEY":"${user_config.api_key}"}}}}`,
		"skills/s/SKILL.md": "---\ndescription: s\n---\nbody\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// secretOutsideConfig lists the files under home, config/ aside, that hold
// the secret.
func secretOutsideConfig(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(home, "config") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(pageSecret)) {
				out = append(out, p)
			}
		}
		return nil
	})
	return out
}

// The API takes values with a plan and again with the install; a stored
// plan keeps no sensitive value, so an install by planId alone is refused
// until they are sent again.
func TestUserConfigAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	src := userConfigPlugin(t)
	missing := e.do("POST", "/plugins/plan", map[string]any{"source": src}, nil)
	missing.wantError(t, http.StatusUnprocessableEntity, "install.config_required")
	config := map[string]string{"api_key": pageSecret, "endpoint": "https://svc.example"}
	r := e.do("POST", "/plugins/plan", map[string]any{"source": src, "config": config}, nil)
	if r.status != http.StatusOK || bytes.Contains(r.body, []byte(pageSecret)) {
		t.Fatalf("plan: %d %s", r.status, r.body)
	}
	planID := r.response(t).PlanID
	bare := e.do("POST", "/plugins/install", map[string]any{"planId": planID}, nil)
	bare.wantError(t, http.StatusUnprocessableEntity, "install.config_required")
	if len(e.installed()) != 0 {
		t.Fatal("installed without its values")
	}
	ok := e.do("POST", "/plugins/install", map[string]any{"planId": planID, "config": map[string]string{"api_key": pageSecret}}, nil)
	if ok.status != http.StatusOK || ok.response(t).Status != "applied" || bytes.Contains(ok.body, []byte(pageSecret)) {
		t.Fatalf("install: %d %s", ok.status, ok.body)
	}
	list := e.do("GET", "/plugins", nil, nil)
	if bytes.Contains(list.body, []byte(pageSecret)) || !bytes.Contains(list.body, []byte(`"server.js",`)) || !bytes.Contains(list.body, []byte(`"https://svc.example"`)) {
		t.Fatalf("GET /plugins: %s", list.body)
	}
	exp := e.do("GET", "/plugins/uc/export", nil, nil)
	if exp.status != http.StatusOK || bytes.Contains(exp.body, []byte(pageSecret)) {
		t.Fatalf("export: %d", exp.status)
	}
	if leaks := secretOutsideConfig(t, e.home.Dir); len(leaks) > 0 {
		t.Fatalf("the secret is written outside config/: %v", leaks)
	}
	if strings.Contains(e.log.String(), pageSecret) {
		t.Fatal("the daemon logged the secret")
	}
	up := e.do("POST", "/plugins/update", map[string]any{"name": "uc", "config": map[string]string{"port": "9091"}}, nil)
	if up.status != http.StatusOK || up.response(t).Status != "planned" {
		t.Fatalf("update plan: %d %s", up.status, up.body)
	}
	applied := e.do("POST", "/plugins/install", map[string]any{"planId": up.response(t).PlanID}, nil)
	if applied.status != http.StatusOK || applied.response(t).Status != "applied" {
		t.Fatalf("update: %d %s", applied.status, applied.body)
	}
	if got := e.installed()["uc"].Config["port"].Text(); got != "9091" {
		t.Fatalf("port after update: %s", got)
	}
	if rm := e.do("DELETE", "/plugins/uc", nil, nil); rm.status != http.StatusOK {
		t.Fatalf("remove: %d %s", rm.status, rm.body)
	}
	if ents, _ := os.ReadDir(e.home.ConfigDir()); len(ents) != 0 {
		t.Fatalf("config/ after remove: %v", ents)
	}
}

// TestBrowserUserConfigForm: the plan shows a form for the options; a
// sensitive one is a password field; values reviewed are the ones
// installed, the secret only under config/, never on the page.
func TestBrowserUserConfigForm(t *testing.T) {
	e := newEnv(t, envOpts{})
	src := userConfigPlugin(t)
	p := newTab(t, e)
	p.signIn()
	p.do(chromedp.SendKeys(chromedp.CSS("#source"), src))
	p.click("#plan-button")
	p.visible(`#plan-cards article[data-name="uc"] fieldset.options`)
	if !eval[bool](p, `document.getElementById("install-button").disabled`) {
		t.Fatal("Install is enabled for a plan that lacks values")
	}
	if got := p.text("#install-button-why"); !strings.Contains(got, "Give the options their values") {
		t.Fatalf("why: %q", got)
	}
	if got := eval[string](p, `document.querySelector('input[data-key="uc.api_key"]').type`); got != "password" {
		t.Fatalf("the sensitive option is a %q field", got)
	}
	if got := eval[string](p, `document.querySelector('input[data-key="uc.port"]').placeholder`); got != "default: 8080" {
		t.Fatalf("port placeholder %q", got)
	}
	p.shot("add-options")

	p.do(chromedp.SendKeys(chromedp.CSS(`input[data-key="uc.api_key"]`), pageSecret),
		chromedp.SendKeys(chromedp.CSS(`input[data-key="uc.endpoint"]`), "https://svc.example"))
	// Values typed but not reviewed: Install waits for a review.
	if got := p.text("#install-button-why"); !strings.Contains(got, "review them first") {
		t.Fatalf("why after typing: %q", got)
	}
	p.click(`#plan-cards article[data-name="uc"] button.review-values`)
	p.until("the plan with values", `!document.getElementById("install-button").disabled`)
	if got := p.text(`#plan-cards article[data-name="uc"]`); !strings.Contains(got, "server.js --port 8080 --endpoint https://svc.example") {
		t.Fatalf("card: %q", got)
	}
	if eval[bool](p, `document.documentElement.outerHTML.includes(`+jsString(pageSecret)+`)`) {
		t.Fatal("the secret is in the page's markup")
	}
	p.click("#install-button")
	p.until("the install", `document.getElementById("install-result")?.dataset.status === "applied"`)
	if got := e.installed()["uc"]; got.ConfigFile != "uc.json" || got.Config["endpoint"].Text() != "https://svc.example" {
		t.Fatalf("installed %+v", got)
	}
	info, err := os.Stat(filepath.Join(e.home.ConfigDir(), "uc.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v", info, err)
	}
	if leaks := secretOutsideConfig(t, e.home.Dir); len(leaks) > 0 {
		t.Fatalf("the secret is written outside config/: %v", leaks)
	}
	if eval[bool](p, `document.documentElement.outerHTML.includes(`+jsString(pageSecret)+`) || Array.from(document.querySelectorAll("input")).some((i) => i.value.includes(`+jsString(pageSecret)+`))`) {
		t.Fatal("the page keeps the secret after installing")
	}
	p.shot("add-options-installed")
}
