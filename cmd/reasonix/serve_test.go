package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// daemon is a running `reasonix serve` (the real binary).
type daemon struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	token  string
	stdout *lockedBuffer
	stderr *lockedBuffer
	exited chan struct{}
	code   int
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startDaemon starts `reasonix serve --addr 127.0.0.1:0 ARGS…` over home and
// waits until it says where it listens.
func startDaemon(t *testing.T, home string, env []string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), "REASONIX_HOME="+home), env...)
	d := &daemon{t: t, cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(d.stdout, line)
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				url, _, _ := strings.Cut(rest, " ")
				listening <- url
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
		err := cmd.Wait()
		d.code = cmd.ProcessState.ExitCode()
		if err != nil && d.code == 0 {
			d.code = -2
		}
		close(d.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-d.exited:
		default:
			_ = cmd.Process.Kill()
			<-d.exited
		}
	})
	select {
	case d.url = <-listening:
	case <-d.exited:
		t.Fatalf("serve exited with %d before listening: %s %s", d.code, d.stdout, d.stderr)
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start: %s %s", d.stdout, d.stderr)
	}
	tok, err := os.ReadFile(filepath.Join(home, "serve.token"))
	if err != nil {
		t.Fatal(err)
	}
	d.token = strings.TrimSpace(string(tok))
	return d
}

// stop sends SIGTERM and waits for the exit status.
func (d *daemon) stop() int {
	d.t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(40 * time.Second):
		d.t.Fatalf("serve did not stop on SIGTERM: %s", d.stderr)
	}
	return d.code
}

// kill stops the daemon with SIGKILL, as a crash would.
func (d *daemon) kill() {
	d.t.Helper()
	_ = d.cmd.Process.Kill()
	<-d.exited
}

type apiReply struct {
	status int
	header http.Header
	body   []byte
}

func (r apiReply) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("status %d: not JSON (%v): %s", r.status, err, r.body)
	}
	return v
}

func (d *daemon) call(method, path string, body any) (apiReply, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return apiReply{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, d.url+path, rd)
	if err != nil {
		return apiReply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return apiReply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return apiReply{status: resp.StatusCode, header: resp.Header, body: data}, err
}

func (d *daemon) do(method, path string, body any) apiReply {
	d.t.Helper()
	r, err := d.call(method, path, body)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// TestServeBinary: the real daemon — startup, token file, the CLI and the
// API agreeing byte for byte on a plan and a listing, plan → kill → restart
// → install by planId, export, and a clean exit on SIGTERM.
func TestServeBinary(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	src := copyDir(t, filepath.Join("..", "..", "examples", "hello-claude"), filepath.Join(t.TempDir(), "hello-claude"))

	r := run(t, home, nil, "serve", "--addr", "0.0.0.0:0")
	if r.code != 2 || !strings.Contains(r.stderr, "--allow-remote") {
		t.Fatalf("non-loopback without --allow-remote: %d %s", r.code, r.stderr)
	}

	d := startDaemon(t, home, nil)
	info, err := os.Stat(filepath.Join(home, "serve.token"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("serve.token: %v %v", info.Mode(), err)
	}
	if !strings.Contains(d.stdout.String(), filepath.Join(home, "serve.token")) {
		t.Fatalf("serve does not say where the token is: %s", d.stdout)
	}

	cli := run(t, home, nil, "plugin", "install", src, "--dry-run")
	if cli.code != 0 {
		t.Fatalf("CLI dry-run: %s %s", cli.stdout, cli.stderr)
	}
	api := d.do("POST", "/plugins/plan", map[string]any{"source": src})
	if api.status != 200 {
		t.Fatalf("API plan: %d %s", api.status, api.body)
	}
	cliPlan, apiPlan := cli.json(t), api.json(t)
	if cliPlan["planId"] != apiPlan["planId"] || !reflect.DeepEqual(cliPlan["actions"], apiPlan["actions"]) {
		t.Fatalf("CLI and API plans differ:\nCLI %s\nAPI %s", cli.stdout, api.body)
	}
	if cli.stdout != string(api.body) {
		t.Fatalf("CLI and API plan JSON are not byte-identical:\nCLI %s\nAPI %s", cli.stdout, api.body)
	}
	planID := apiPlan["planId"].(string)

	d.kill() // the plan must survive even an unclean stop: it is in the cache
	d = startDaemon(t, home, nil)
	r2 := d.do("POST", "/plugins/install", map[string]any{"planId": planID})
	if r2.status != 200 || r2.json(t)["applied"] != true {
		t.Fatalf("install by planId after restart: %d %s", r2.status, r2.body)
	}
	list := run(t, home, nil, "plugin", "list", "--json")
	if api := d.do("GET", "/plugins", nil); api.status != 200 || list.stdout != string(api.body) {
		t.Fatalf("CLI list and GET /plugins differ:\nCLI %s\nAPI %d %s", list.stdout, api.status, api.body)
	}
	exp := d.do("GET", "/plugins/hello-claude/export", nil)
	if exp.status != 200 || !strings.Contains(exp.header.Get("X-Reasonix-Required-Env"), "WEATHER_API_KEY") ||
		!strings.Contains(exp.header.Get("Content-Disposition"), "hello-claude.zip") || bytes.Contains(exp.body, []byte("sk-example-not-a-real-key")) {
		t.Fatalf("export: %d %v", exp.status, exp.header)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, d.stderr)
	}
	logs := d.stderr.String()
	if !strings.Contains(logs, `"path":"/plugins/install"`) || !strings.Contains(logs, `"status":200`) {
		t.Fatalf("no request log lines: %s", logs)
	}
	if strings.Contains(logs+d.stdout.String(), d.token) {
		t.Fatal("the token was printed or logged")
	}
}

// TestServeAndCLIConcurrently races the CLI (`plugin install --yes`, the real
// binary) against the daemon's API, 50 times: different plugins both land;
// the same plugin is installed by exactly one, the other refusing cleanly;
// and a reader parsing the registry throughout never sees it torn.
func TestServeAndCLIConcurrently(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := startDaemon(t, home, nil)
	srcDir := t.TempDir()
	regPath := filepath.Join(home, "plugin-packages.json")

	stop := make(chan struct{})
	var reads int
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(regPath)
			if err != nil {
				continue
			}
			var reg registryFile
			if err := json.Unmarshal(data, &reg); err != nil {
				t.Errorf("torn registry: %v\n%s", err, data)
				return
			}
			reads++
		}
	}()

	apiInstall := func(src string) (apiReply, error) {
		plan, err := d.call("POST", "/plugins/plan", map[string]any{"source": src})
		if err != nil || plan.status != 200 {
			return plan, err
		}
		var p struct{ PlanID string }
		if err := json.Unmarshal(plan.body, &p); err != nil {
			return plan, err
		}
		return d.call("POST", "/plugins/install", map[string]any{"planId": p.PlanID})
	}
	const rounds = 50
	for i := range rounds {
		a := writeNamedPlugin(t, srcDir, fmt.Sprintf("cli-%02d", i))
		b := writeNamedPlugin(t, srcDir, fmt.Sprintf("api-%02d", i))
		same := writeNamedPlugin(t, srcDir, fmt.Sprintf("both-%02d", i))

		// Different plugins: both land.
		var wg sync.WaitGroup
		var cliRes result
		var apiRes apiReply
		var apiErr error
		wg.Add(2)
		go func() { defer wg.Done(); cliRes = run(t, home, nil, "plugin", "install", a, "--yes") }()
		go func() { defer wg.Done(); apiRes, apiErr = apiInstall(b) }()
		wg.Wait()
		if cliRes.code != 0 || apiErr != nil || apiRes.status != 200 {
			t.Fatalf("round %d, different plugins: CLI %d %s %s; API %v %d %s", i, cliRes.code, cliRes.stdout, cliRes.stderr, apiErr, apiRes.status, apiRes.body)
		}

		// The same plugin: one installs it; the other refuses cleanly, or,
		// planning after the winner published, finds it up to date.
		wg.Add(2)
		go func() { defer wg.Done(); cliRes = run(t, home, nil, "plugin", "install", same, "--yes") }()
		go func() { defer wg.Done(); apiRes, apiErr = apiInstall(same) }()
		wg.Wait()
		if apiErr != nil {
			t.Fatalf("round %d: API: %v", i, apiErr)
		}
		cli, api := cliRes.json(t), apiRes.json(t)
		cliWon, apiWon := cli["applied"] == true, api["applied"] == true
		if cliWon == apiWon {
			t.Fatalf("round %d, same plugin: CLI %d %s; API %d %s — want exactly one to install it", i, cliRes.code, cliRes.stdout, apiRes.status, apiRes.body)
		}
		refusal := map[any]bool{"install.conflict": true, "install.approval_denied": true}
		loser, code, upToDate := cli, cliRes.code, 0
		if cliWon {
			loser, code, upToDate = api, apiRes.status, 200
		}
		switch {
		case loser["status"] == "up-to-date" && code == upToDate:
		case refusal[loser["errorCode"]] && (code == 1 || code == http.StatusUnprocessableEntity):
		default:
			t.Fatalf("round %d: the loser (%d) neither refused cleanly nor found it up to date: %v", i, code, loser)
		}

		reg := readRegistry(t, home)
		want := map[string]bool{}
		for j := 0; j <= i; j++ {
			for _, n := range []string{"cli-%02d", "api-%02d", "both-%02d"} {
				want[fmt.Sprintf(n, j)] = true
			}
		}
		if len(reg.Plugins) != len(want) {
			t.Fatalf("round %d: registry has %d plugins, want %d", i, len(reg.Plugins), len(want))
		}
		for _, p := range reg.Plugins {
			if !want[p.Name] {
				t.Fatalf("round %d: unexpected %s", i, p.Name)
			}
		}
	}
	close(stop)
	<-readerDone
	if reads == 0 {
		t.Fatal("the reader never read the registry")
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, d.stderr)
	}
}

func writeNamedPlugin(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: skill of " + name + "\n---\nbody\n",
	}
	for p, c := range files {
		writeFile(t, filepath.Join(dir, p), c)
	}
	return dir
}

// TestServeSIGTERMDuringApply stops the real daemon with SIGTERM while an
// install is in flight (held after staging by the test-only slow-step
// switch), for a single replacement and for a bulk marketplace install. With
// the default grace the install completes; with no grace it is cancelled.
// After a restart the registry is exactly the old or the new state — never
// a mix — every registered root matches its digest, and nothing staged was
// adopted.
func TestServeSIGTERMDuringApply(t *testing.T) {
	t.Parallel()
	type variant struct {
		name  string
		args  []string
		isNew bool
	}
	variants := []variant{
		{"graceful", nil, true},
		{"no-grace", []string{"--shutdown-timeout", "0"}, false},
	}
	for _, bulk := range []bool{false, true} {
		for _, v := range variants {
			name := "single/" + v.name
			if bulk {
				name = "bulk/" + v.name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				home := t.TempDir()
				parent := t.TempDir()
				alpha1 := writePluginNamed(t, filepath.Join(t.TempDir(), "alpha"), "alpha", "1.0.0")
				if r := run(t, home, nil, "plugin", "install", alpha1, "--yes"); r.code != 0 {
					t.Fatalf("install alpha 1: %s %s", r.stdout, r.stderr)
				}
				oldState := stateOf(t, home)
				src := writePluginNamed(t, filepath.Join(parent, "alpha"), "alpha", "2.0.0")
				if bulk {
					writePluginNamed(t, filepath.Join(parent, "beta"), "beta", "1.0.0")
					writePluginNamed(t, filepath.Join(parent, "gamma"), "gamma", "1.0.0")
					writeFile(t, filepath.Join(parent, ".claude-plugin", "marketplace.json"), `{"name":"bulk","owner":{"name":"tests"},"plugins":[
						{"name":"alpha","source":"./alpha"},{"name":"beta","source":"./beta"},{"name":"gamma","source":"./gamma"}]}`)
					src = parent
				}

				d := startDaemon(t, home, []string{"REASONIX_TEST_SLOWSTEP=after-staging=1500ms"}, v.args...)
				plan := d.do("POST", "/plugins/plan", map[string]any{"source": src, "replace": true})
				if plan.status != 200 {
					t.Fatalf("plan: %d %s", plan.status, plan.body)
				}
				planID := plan.json(t)["planId"].(string)
				answered := make(chan apiReply, 1)
				go func() {
					r, _ := d.call("POST", "/plugins/install", map[string]any{"planId": planID})
					answered <- r
				}()
				staged := 1
				if bulk {
					staged = 3
				}
				waitForStaging(t, filepath.Join(home, "plugins"), staged)
				code := d.stop()
				<-answered
				if code != 0 {
					t.Fatalf("serve exited %d on SIGTERM: %s", code, d.stderr)
				}

				// Restart: the registry alone decides.
				d = startDaemon(t, home, nil)
				got := stateOf(t, home)
				newNames := []string{"alpha@2.0.0"}
				if bulk {
					newNames = []string{"alpha@2.0.0", "beta@1.0.0", "gamma@1.0.0"}
				}
				isOld := reflect.DeepEqual(got, oldState)
				isNew := reflect.DeepEqual(got, newNames)
				if !isOld && !isNew {
					t.Fatalf("registry after SIGTERM is a mix: %v (old %v, new %v)", got, oldState, newNames)
				}
				if isNew != v.isNew {
					t.Fatalf("registry is %v; with %s want new=%v", got, v.name, v.isNew)
				}
				reg := readRegistry(t, home)
				for _, p := range reg.Plugins {
					assertRootDigest(t, p.Root, p.ContentDigest)
					if strings.Contains(p.Root, ".staging-") || strings.Contains(p.Root, ".trash-") {
						t.Fatalf("adopted a leftover: %s", p.Root)
					}
				}
				list := d.do("GET", "/plugins", nil)
				if list.status != 200 || strings.Contains(string(list.body), `"excluded"`) {
					t.Fatalf("GET /plugins after restart: %d %s", list.status, list.body)
				}
				if code := d.stop(); code != 0 {
					t.Fatalf("serve exited %d: %s", code, d.stderr)
				}
			})
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writePluginNamed(t *testing.T, dir, name, version string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), `{"name":"`+name+`","version":"`+version+`"}`)
	writeFile(t, filepath.Join(dir, "skills", "s", "SKILL.md"), "---\ndescription: "+name+" "+version+"\n---\n"+strings.Repeat(version, 2000)+"\n")
	return dir
}

// stateOf is the registry as sorted name@version pairs.
func stateOf(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	for _, p := range readRegistry(t, home).Plugins {
		out = append(out, p.Name+"@"+p.Version)
	}
	sort.Strings(out)
	return out
}

// waitForStaging waits until apply has created n staging folders under
// plugins/: the stop then lands while the last is being copied or while the
// slow-step switch holds apply after staging, both before publication.
func waitForStaging(t *testing.T, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ents, _ := os.ReadDir(dir)
		staged := 0
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".staging-") {
				staged++
			}
		}
		if staged >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("apply never staged %d plugins", n)
}
