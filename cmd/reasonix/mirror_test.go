package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/meta"
)

// replica is a `reasonix mirror serve` subprocess.
type replica struct {
	id     string
	url    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

// startReplicas runs n replicas of the built binary over one database and
// bucket, upstream being the fake GitHub (on loopback: reaching it takes
// --allow-private-upstreams in extra).
func startReplicas(t *testing.T, n int, eng *mirrortest.Engines, gh *fakegithub.Server, extra ...string) []*replica {
	t.Helper()
	var out []*replica
	for i := range n {
		dir := t.TempDir()
		addrFile := filepath.Join(dir, "addr")
		r := &replica{id: fmt.Sprintf("replica-%d", i), stderr: &bytes.Buffer{}, done: make(chan error, 1)}
		args := append([]string{"mirror", "serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile,
			"--postgres", eng.DSN, "--s3-endpoint", eng.Endpoint, "--s3-bucket", eng.Bucket,
			"--replica-id", r.id, "--lease-ttl", "2s"}, extra...)
		r.cmd = exec.Command(binPath, args...)
		r.cmd.Env = append(os.Environ(), "REASONIX_GITHUB_URL="+gh.URL, "REASONIX_GITHUB_API_URL="+gh.APIURL,
			"REASONIX_URL_REWRITE=https://=http://127.0.0.1:1/", "TMPDIR="+dir)
		r.cmd.Stderr = r.stderr
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { r.done <- r.cmd.Wait() }()
		t.Cleanup(func() {
			_ = r.cmd.Process.Kill()
			<-r.done
		})
		deadline := time.Now().Add(60 * time.Second)
		for {
			if b, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(b), "\n") {
				r.url = "http://" + strings.TrimSpace(string(b))
				break
			}
			select {
			case err := <-r.done:
				t.Fatalf("%s exited: %v\n%s", r.id, err, r.stderr)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not start:\n%s", r.id, r.stderr)
			}
			time.Sleep(20 * time.Millisecond)
		}
		out = append(out, r)
	}
	return out
}

// fleet installs src on n machines at once, each listing every replica
// (in a rotated order, so all of them serve first), and returns each
// machine's installed plugins as name → content digest. With a verifier
// key vkey, each machine checks its installs against the checksum log its
// first replica serves (REASONIX_CHECKSUM_LOG), so every replica serves
// the log to some.
func fleet(t *testing.T, n int, reps []*replica, token, vkey string, gh *fakegithub.Server, src string) []map[string]string {
	t.Helper()
	results := make([]map[string]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range n {
		var urls []string
		for k := range reps {
			urls = append(urls, reps[(i+k)%len(reps)].url)
		}
		home := filepath.Join(t.TempDir(), "home")
		var env map[string]string
		if vkey != "" {
			env = map[string]string{"REASONIX_CHECKSUM_LOG": vkey + " " + urls[0] + "/log"}
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			got, err := mirrortest.InstallThroughMirror(ctx, home, urls, token, env, gh, src)
			if err != nil {
				errs[i] = fmt.Errorf("machine %d: %w", i, err)
				return
			}
			if os.Getenv("REASONIX_TEST_FLEET_DEBUG") != "" {
				t.Logf("machine %d done after %s", i, time.Since(began).Round(time.Millisecond))
			}
			results[i] = got
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return results
}

func sameDigests(t *testing.T, results []map[string]string, entries int) {
	t.Helper()
	for i, r := range results {
		if len(r) != entries {
			t.Fatalf("machine %d holds %d plugins, want %d", i, len(r), entries)
		}
		for name, d := range r {
			if d == "" || d != results[0][name] {
				t.Fatalf("machine %d: %s has digest %q, machine 0 %q", i, name, d, results[0][name])
			}
		}
	}
}

// SPEC §15's acceptance, sized for CI (bench/mirror runs the 300/50 one):
// three replicas over one PostgreSQL and one object store, twenty machines
// bulk-installing one marketplace at once. Upstream sees one content fetch
// per repo@SHA and one ref request per repository for the whole fleet, and
// every machine holds the same digests. The replicas serve the checksum
// log (SPEC §17, --log-key) and every machine checks its installs against
// it: the log then holds every plugin's record once, with the digest every
// machine installed, and the log costs upstream nothing more. Then, with a
// fresh marketplace, one replica is killed (SIGKILL) while it holds a
// fetch lease: every machine still completes, and another replica takes
// the lease over (those machines check no log: theirs is at one URL, and
// a client whose log is down fails closed, by design).
func TestMirrorFleet(t *testing.T) {
	setup := time.Now()
	eng := mirrortest.Open(t)
	gh := fakegithub.New(t)
	const entries, repos, machines = 60, 10, 20
	src, err := bulkmarket.Fleet(gh, "bulk", entries, repos)
	if err != nil {
		t.Fatal(err)
	}
	killSrc, err := bulkmarket.Fleet(gh, "kill", entries, repos)
	if err != nil {
		t.Fatal(err)
	}
	gh.ResetCounts()
	token := eng.Token(t, "fleet")
	keyFile := filepath.Join(t.TempDir(), "log.key")
	created := run(t, t.TempDir(), nil, "mirror", "log-key", "create", "fleet.example.test", "-o", keyFile)
	if created.code != 0 {
		t.Fatalf("log-key create: %s", created.stderr)
	}
	vkey := strings.TrimSpace(created.stdout)
	reps := startReplicas(t, 3, eng, gh, "--allow-private-upstreams", "--log-key", keyFile)
	t.Logf("engines, repositories and replicas ready in %s", time.Since(setup).Round(time.Millisecond))

	start := time.Now()
	installed := fleet(t, machines, reps, token, vkey, gh, src)
	sameDigests(t, installed, entries)
	t.Logf("%d machines installed %d plugins each, checked against the log, in %s", machines, entries, time.Since(start).Round(time.Millisecond))
	if _, err := mirrortest.FleetLogHoldsEachOnce(context.Background(), eng.DB, gh, "bulk", repos, installed[0]); err != nil {
		t.Error(err)
	}
	for r := range repos + 1 {
		name := fmt.Sprintf("repo%02d", r)
		if r == repos {
			name = "market"
		}
		c := gh.RepoCounts("bulk", name)
		// One content fetch (git upload-pack or archive); one ref
		// request: the git advertisement that fetch needs, plus, for the
		// marketplace (the only ref resolved), one REST commits call.
		wantAPI := 0
		if name == "market" {
			wantAPI = 1
		}
		if c.Content() != 1 || c.InfoRefs != 1 || c.APICommits != wantAPI || c.APICompare != 0 || c.APIRefs != 0 {
			t.Errorf("bulk/%s: %+v, want 1 content fetch and 1 ref request for the fleet", name, c)
		}
	}

	// The kill: the first fetch of kill/repo03 stalls upstream, so its
	// replica is holding the lease when it dies.
	gh.Fault(fakegithub.PathPrefix("/kill/repo03.git/git-upload-pack"), fakegithub.Fault{Stall: 20 * time.Second, Times: 1})
	killed := make(chan string, 1)
	go func() {
		defer close(killed)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for ctx.Err() == nil {
			// Only the lease holder fetches, so once the stalled
			// upload-pack has reached the fake, the holder is the one
			// waiting on it.
			ls, err := eng.DB.Leases(ctx, "fetch:github.com/kill/repo03#")
			if err == nil && len(ls) == 1 && !ls[0].Expired && gh.RepoCounts("kill", "repo03").UploadPack == 1 {
				for _, r := range reps {
					if r.id == ls[0].Holder {
						_ = r.cmd.Process.Signal(syscall.SIGKILL)
						killed <- r.id
						return
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start = time.Now()
	results := fleet(t, machines, reps, token, "", gh, killSrc)
	t.Logf("with a replica killed: %s", time.Since(start).Round(time.Millisecond))
	dead, ok := <-killed
	if !ok {
		t.Fatal("no replica ever held the lease of kill/repo03")
	}
	sameDigests(t, results, entries)
	for _, r := range reps {
		if r.id == dead {
			if err := <-r.done; err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("%s: %v", r.id, err)
			}
			r.done <- nil // for the cleanup
		}
	}
	log, err := eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "lease.takeover"})
	if err != nil {
		t.Fatal(err)
	}
	// Every fetch lease the dead replica held was taken over by another;
	// the stalled one, certainly.
	takenOver := map[string]bool{}
	for _, e := range log {
		held, ok := strings.CutPrefix(e.Detail, dead+" held ")
		if !ok || e.Replica == dead {
			t.Fatalf("unexpected takeover %+v (dead: %s)", e, dead)
		}
		if rest, ok := strings.CutPrefix(held, "fetch:github.com/kill/"); ok {
			repo, _, _ := strings.Cut(rest, "#")
			takenOver[repo] = true
		}
	}
	if !takenOver["repo03"] {
		t.Fatalf("no replica took over %s's lease on kill/repo03; audit: %+v", dead, log)
	}
	for r := range repos + 1 {
		name := fmt.Sprintf("repo%02d", r)
		if r == repos {
			name = "market"
		}
		// A fetch the dead replica had started is done again by the
		// replica that took its lease over; no other is repeated.
		c := gh.RepoCounts("kill", name).Content()
		switch {
		case name == "repo03" && c != 2:
			t.Errorf("kill/repo03: %d content fetches, want 2 (the stalled one and the takeover's)", c)
		case c == 2 && !takenOver[name], c < 1, c > 2:
			t.Errorf("kill/%s: %d content fetches (lease taken over: %v)", name, c, takenOver[name])
		}
	}
	t.Logf("killed %s; leases taken over: %v", dead, takenOver)

	if os.Getenv("REASONIX_TEST_FLEET_DEBUG") != "" {
		for _, r := range reps {
			t.Logf("%s:\n%s", r.id, r.stderr)
		}
	}
	// The survivors stop gracefully on SIGTERM.
	stopping := time.Now()
	defer func() { t.Logf("stopped in %s", time.Since(stopping).Round(time.Millisecond)) }()
	for _, r := range reps {
		if r.id == dead {
			continue
		}
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-r.done:
			if err != nil {
				t.Fatalf("%s on SIGTERM: %v\n%s", r.id, err, r.stderr)
			}
			r.done <- nil
		case <-time.After(40 * time.Second):
			t.Fatalf("%s did not stop on SIGTERM", r.id)
		}
	}
}

func TestMirrorTokenCommands(t *testing.T) {
	t.Parallel()
	mirrortest.Skip(t)
	dsn := mirrortest.Postgres(t)
	home := t.TempDir()
	created := run(t, home, nil, "mirror", "token", "create", "--postgres", dsn, "--name", "laptop-1")
	token := strings.TrimSpace(created.stdout)
	if created.code != 0 || !strings.HasPrefix(token, meta.TokenPrefix) || strings.Count(created.stdout, "\n") != 1 {
		t.Fatalf("create: %+v", created)
	}
	again := run(t, home, nil, "mirror", "token", "create", "--postgres", dsn, "--name", "laptop-1")
	if again.code != 1 || again.stdout != "" || !strings.Contains(again.stderr, "revoke it first") {
		t.Fatalf("duplicate: %+v", again)
	}
	if r := run(t, home, nil, "mirror", "token", "revoke", "--postgres", dsn, "--name", "laptop-1"); r.code != 0 {
		t.Fatalf("revoke: %+v", r)
	}
	if r := run(t, home, nil, "mirror", "token", "revoke", "--postgres", dsn, "--name", "laptop-1"); r.code != 1 || !strings.Contains(r.stderr, "no live token") {
		t.Fatalf("revoke twice: %+v", r)
	}
	db, err := meta.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok, _ := db.Authenticate(context.Background(), token); ok {
		t.Fatal("revoked token still accepted")
	}
	scoped := run(t, home, nil, "mirror", "token", "create", "--postgres", dsn, "--name", "ci", "--scope", "github.com/acme", "--scope", "bücher.example/team/tools")
	tok, ok, err := db.Authenticate(context.Background(), strings.TrimSpace(scoped.stdout))
	if scoped.code != 0 || !ok || err != nil || !slices.Equal(tok.Scopes.Rules(), []string{"github.com/acme", "bücher.example/team/tools"}) {
		t.Fatalf("create --scope: %+v %+v %v %v", scoped, tok, ok, err)
	}
	audit := run(t, home, nil, "mirror", "audit", "--postgres", dsn, "--json")
	if audit.code != 0 || strings.TrimSpace(audit.stdout) != "[]" {
		t.Fatalf("audit: %+v", audit)
	}
}

func TestMirrorUsageAndSecrets(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mirror", "serve"}, 2, "missing --postgres, --s3-endpoint, --s3-bucket"},
		{[]string{"mirror", "serve", "--postgres", "x", "--s3-endpoint", "y", "--s3-bucket", "z", "--addr", "nope"}, 2, "HOST:PORT"},
		{[]string{"mirror", "token", "create", "--name", "x"}, 2, "missing --postgres"},
		{[]string{"mirror", "token", "revoke", "--postgres", "x"}, 2, "missing --name"},
		{[]string{"mirror", "token", "create", "--postgres", "x", "--name", "y", "--scope", "github.com/acme", "--scope", "https://github.com/evil"}, 2, `--scope: scope rule "https://github.com/evil" has a scheme`},
		{[]string{"mirror", "token", "create", "--postgres", "x", "--name", "y", "--scope", "acme/tools"}, 2, `scope rule "acme/tools" does not start with a host name`},
		{[]string{"mirror", "serve", "--postgres", "postgres://u:pgsecretpw@127.0.0.1:1/x?connect_timeout=1", "--s3-endpoint", "http://127.0.0.1:1", "--s3-bucket", "abc"}, 1, "PostgreSQL"},
		{[]string{"mirror", "serve", "--postgres", "x", "--s3-endpoint", "y", "--s3-bucket", "z", "--policy", "/nonexistent/policy.json"}, 1, "policy"},
	} {
		r := run(t, home, []string{"AWS_SECRET_ACCESS_KEY=awssecretvalue"}, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
		if strings.Contains(r.stderr+r.stdout, "pgsecretpw") || strings.Contains(r.stderr+r.stdout, "awssecretvalue") {
			t.Errorf("%v: a secret was printed: %s", tc.args, r.stderr)
		}
	}
}

// TestMirrorThroughTheCLI: REASONIX_MIRROR reaches the command line's
// wiring (app.Open). With REASONIX_MIRROR_ONLY=1 and GitHub itself
// unreachable from the client, an install still succeeds, every upstream
// request having come from the mirror; a wrong token is refused with the
// token masked.
func TestMirrorThroughTheCLI(t *testing.T) {
	eng := mirrortest.Open(t)
	gh := fakegithub.New(t)
	sha := gh.CreateRepo("acme", "hello").Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name":"hello"}`,
		"skills/greet/SKILL.md":      "---\ndescription: greets\n---\n",
	})
	token := eng.Token(t, "cli")
	reps := startReplicas(t, 1, eng, gh, "--allow-private-upstreams")
	env := []string{
		"REASONIX_MIRROR=" + reps[0].url, "REASONIX_MIRROR_TOKEN=" + token, "REASONIX_MIRROR_ONLY=1",
		// The client itself can reach no GitHub.
		"REASONIX_GITHUB_URL=http://127.0.0.1:1", "REASONIX_GITHUB_API_URL=http://127.0.0.1:1",
	}
	home := t.TempDir()
	r := run(t, home, env, "plugin", "install", "https://github.com/acme/hello", "--yes")
	if r.code != 0 {
		t.Fatalf("install through the mirror: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := r.json(t)["resolved"].(map[string]any); got["commit"] != sha || got["transport"] != "mirror" {
		t.Fatalf("resolved %v, want commit %s over the mirror", got, sha)
	}
	if c := gh.RepoCounts("acme", "hello"); c.Content() != 1 {
		t.Fatalf("upstream saw %+v, want the mirror's one fetch", c)
	}

	bad := "rxm_" + strings.Repeat("x", 40)
	env[1] = "REASONIX_MIRROR_TOKEN=" + bad
	r = run(t, t.TempDir(), env, "plugin", "install", "https://github.com/acme/hello", "--dry-run")
	if r.code != 1 || strings.Contains(r.stdout+r.stderr, bad) {
		t.Fatalf("a wrong token: exit %d, output must not hold it:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
