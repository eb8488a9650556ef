package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
)

// log-key create writes the signing key (0600, never over a file) and
// prints the verifier key alone, so a script can capture it.
func TestMirrorLogKeyCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.key")
	r := run(t, t.TempDir(), nil, "mirror", "log-key", "create", "mirror.example.test", "-o", path)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	vkey := strings.TrimSuffix(r.stdout, "\n")
	if v, err := note.NewVerifier(vkey); err != nil || v.Name() != "mirror.example.test" || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("stdout %q is not the verifier key alone: %v", r.stdout, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", info, err)
	}
	key, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(key), "PRIVATE+KEY+mirror.example.test+") {
		t.Fatalf("key file holds %d bytes not a signer key", len(key))
	}

	again := run(t, t.TempDir(), nil, "mirror", "log-key", "create", "mirror.example.test", "-o", path)
	if again.code != 1 || again.stdout != "" || !strings.Contains(again.stderr, path) || !strings.Contains(again.stderr, "refusing to replace") {
		t.Fatalf("over an existing key: exit %d %q %q", again.code, again.stdout, again.stderr)
	}
	if after, _ := os.ReadFile(path); string(after) != string(key) {
		t.Fatal("the existing key was changed")
	}
	for _, args := range [][]string{{"a+b"}, {"../x"}, {}, {"a", "b"}} {
		bad := run(t, t.TempDir(), nil, append([]string{"mirror", "log-key", "create", "-o", filepath.Join(dir, "bad.key")}, args...)...)
		if bad.code != 2 || bad.stdout != "" {
			t.Errorf("%q: exit %d %q %q, want a usage error", args, bad.code, bad.stdout, bad.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.key")); err == nil {
		t.Error("a refused name wrote a key")
	}

	// Without -o: NAME.key in the current folder.
	cwd := t.TempDir()
	def := runBinaryWith(t, t.TempDir(), nil, []string{"mirror", "log-key", "create", "log.corp.test"}, func(c *exec.Cmd) error {
		c.Dir = cwd
		return c.Run()
	})
	if def.code != 0 {
		t.Fatalf("exit %d: %s", def.code, def.stderr)
	}
	if _, err := os.Stat(filepath.Join(cwd, "log.corp.test.key")); err != nil {
		t.Fatalf("no NAME.key in the current folder: %v", err)
	}
}

// serve --log-key refuses a key file it cannot use before it opens anything,
// naming the file and never showing what it holds.
func TestMirrorServeRefusesABadLogKey(t *testing.T) {
	dir := t.TempDir()
	skey, vkey, err := note.GenerateKey(nil, "mirror.example.test")
	if err != nil {
		t.Fatal(err)
	}
	material := strings.SplitN(skey, "+", 5)[4]
	files := map[string]string{
		"verifier.key":  vkey + "\n",
		"truncated.key": skey[:len(skey)-8] + "\n",
		"empty.key":     "",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"verifier.key", "truncated.key", "empty.key", "missing.key"} {
		path := filepath.Join(dir, name)
		r := run(t, t.TempDir(), nil, "mirror", "serve", "--addr", "127.0.0.1:0", "--postgres", "postgres://nobody@127.0.0.1:1/none",
			"--s3-endpoint", "http://127.0.0.1:1", "--s3-bucket", "b", "--log-key", path)
		if r.code != 1 || !strings.Contains(r.stderr, "--log-key") || !strings.Contains(r.stderr, path) {
			t.Errorf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, material[:16]) || strings.Contains(r.stderr, strings.SplitN(vkey, "+", 3)[2][:16]) {
			t.Errorf("%s: the error shows key material: %s", name, r.stderr)
		}
	}
	help := run(t, t.TempDir(), nil, "mirror", "serve", "--help")
	if !strings.Contains(help.stdout, "--log-key") || !strings.Contains(help.stdout, "REASONIX_CHECKSUM_LOG") {
		t.Errorf("serve --help does not document --log-key:\n%s", help.stdout)
	}
}

// Replicas started with --log-key serve the log under /log, signed with
// the key whose verifier log-key create printed, and say which at start.
func TestMirrorServeLogKey(t *testing.T) {
	eng := mirrortest.Open(t)
	gh := fakegithub.New(t)
	path := filepath.Join(t.TempDir(), "log.key")
	created := run(t, t.TempDir(), nil, "mirror", "log-key", "create", "mirror.example.test", "-o", path)
	if created.code != 0 {
		t.Fatal(created.stderr)
	}
	vkey := strings.TrimSpace(created.stdout)
	token := eng.Token(t, "cli")
	reps := startReplicas(t, 2, eng, gh, "--log-key", path)
	v, _ := note.NewVerifier(vkey)
	var heads []string
	for _, rep := range reps {
		req, _ := http.NewRequest(http.MethodGet, rep.url+"/log/latest", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if _, err := note.Open(body, note.VerifierList(v)); resp.StatusCode != 200 || err != nil {
			t.Fatalf("%s: %d %v %s", rep.id, resp.StatusCode, err, body)
		}
		heads = append(heads, string(body))
	}
	if heads[0] != heads[1] {
		t.Errorf("two replicas with one key sign different heads:\n%s\n%s", heads[0], heads[1])
	}
	// Stopped (its stderr is read only then), each said which verifier key
	// its clients need.
	for _, rep := range reps {
		if err := rep.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-rep.done:
			rep.done <- err // for the cleanup's wait
		case <-time.After(40 * time.Second):
			t.Fatalf("%s did not stop on SIGTERM", rep.id)
		}
		if !strings.Contains(rep.stderr.String(), vkey) {
			t.Errorf("%s does not say which verifier key its clients need:\n%s", rep.id, rep.stderr)
		}
	}
}
