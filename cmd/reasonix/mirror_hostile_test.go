package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
)

// plugin commits a one-skill plugin to owner/name on gh.
func plugin(gh *fakegithub.Server, owner, name string) string {
	return gh.CreateRepo(owner, name).Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `"}`,
		"skills/s/SKILL.md":          "---\ndescription: " + name + "\n---\n",
	})
}

// Through the real binaries: a client whose token was revoked, and which
// could reach GitHub itself (no REASONIX_MIRROR_ONLY), asks for a
// repository the mirror's policy blocks. It stops at the mirror's 401 with
// an error naming the mirror and the refused token (never the token), and
// GitHub sees nothing.
func TestMirrorRevokedTokenNeverFallsBack(t *testing.T) {
	eng := mirrortest.Open(t)
	gh := fakegithub.New(t)
	plugin(gh, "acme", "hello")
	plugin(gh, "acme", "secret")
	pol := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(pol, []byte(`{"block": ["github.com/acme/secret"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	created := run(t, t.TempDir(), nil, "mirror", "token", "create", "--postgres", eng.DSN, "--name", "laptop")
	token := strings.TrimSpace(created.stdout)
	reps := startReplicas(t, 1, eng, gh, "--allow-private-upstreams", "--policy", pol)
	env := []string{"REASONIX_MIRROR=" + reps[0].url, "REASONIX_MIRROR_TOKEN=" + token,
		"REASONIX_GITHUB_URL=" + gh.URL, "REASONIX_GITHUB_API_URL=" + gh.APIURL}
	home := t.TempDir()
	if r := runBinary(t, home, env, "plugin", "install", "https://github.com/acme/hello", "--yes"); r.code != 0 {
		t.Fatalf("install with a live token: exit %d\n%s", r.code, r.stderr)
	}
	if r := runBinary(t, home, env, "plugin", "install", "https://github.com/acme/secret", "--yes"); r.code != 1 || !strings.Contains(r.stdout, "install.blocked") {
		t.Fatalf("a blocked repository with a live token: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, t.TempDir(), nil, "mirror", "token", "revoke", "--postgres", eng.DSN, "--name", "laptop"); r.code != 0 {
		t.Fatalf("revoke: %+v", r)
	}
	gh.ResetCounts()
	for _, src := range []string{"https://github.com/acme/secret", "https://github.com/acme/hello"} {
		r := runBinary(t, home, env, "plugin", "install", src, "--yes")
		out := r.stdout + r.stderr
		if r.code != 1 || !strings.Contains(out, reps[0].url) || !strings.Contains(out, "refused the token in REASONIX_MIRROR_TOKEN") || strings.Contains(out, token) {
			t.Errorf("%s with a revoked token: exit %d, want 1 naming the mirror and the refusal, never the token:\n%s", src, r.code, out)
		}
	}
	if c := gh.Counts(); c.Total != 0 {
		t.Fatalf("with a revoked token, GitHub saw %+v", c)
	}
}

// A replica started without --allow-private-upstreams refuses to reach an
// upstream on loopback (the fake GitHub, as a host name resolving inside
// the network would be): the client is told why, and GitHub sees nothing.
// The flag is documented in --help.
func TestMirrorRefusesPrivateUpstreams(t *testing.T) {
	eng := mirrortest.Open(t)
	gh := fakegithub.New(t)
	plugin(gh, "acme", "hello")
	token := eng.Token(t, "cli")
	reps := startReplicas(t, 1, eng, gh)
	env := []string{"REASONIX_MIRROR=" + reps[0].url, "REASONIX_MIRROR_TOKEN=" + token, "REASONIX_MIRROR_ONLY=1"}
	r := runBinary(t, t.TempDir(), env, "plugin", "install", "https://github.com/acme/hello", "--dry-run")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "refusing to connect to 127.0.0.1, a loopback address") {
		t.Fatalf("exit %d, want the refused loopback dial:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if c := gh.Counts(); c.Total != 0 {
		t.Fatalf("GitHub on loopback was reached: %+v", c)
	}
	help := run(t, t.TempDir(), nil, "mirror", "serve", "--help")
	if !strings.Contains(help.stdout+help.stderr, "--allow-private-upstreams") || !strings.Contains(help.stdout+help.stderr, "after DNS resolution") {
		t.Fatalf("--help does not document --allow-private-upstreams:\n%s", help.stdout+help.stderr)
	}
}

// The replica's name goes into every audit row: one that is not text is
// refused at start.
func TestMirrorRefusesAReplicaIDThatIsNotText(t *testing.T) {
	eng := mirrortest.Open(t)
	r := run(t, t.TempDir(), nil, "mirror", "serve", "--addr", "127.0.0.1:0", "--postgres", eng.DSN,
		"--s3-endpoint", eng.Endpoint, "--s3-bucket", eng.Bucket, "--replica-id", "replica\x01one")
	if r.code != 1 || !strings.Contains(r.stderr, "--replica-id") || !strings.Contains(r.stderr, "control character") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}
