// Package sshd starts a real OpenSSH server for tests (Debian's
// openssh-server): on a loopback port, with its own host key and
// configuration, as the current user, authorizing one throwaway client key
// and serving bare repositories made with real git through
// git-upload-pack. Tests that need it skip, saying how to get it, when
// sshd is not installed.
package sshd

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
)

// Server is a running sshd.
type Server struct {
	// Port is the loopback port it listens on (127.0.0.1).
	Port int
	// User is the account it lets in (the current user's).
	User string
	// Dir holds its files; Repos its bare repositories.
	Dir, Repos string
	// HostKey is its public host key; ClientKey the private key file it
	// authorizes.
	HostKey   ssh.PublicKey
	ClientKey string
}

// Addr is "127.0.0.1:PORT".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// KnownHostsLine is the known_hosts line that vouches for its host key.
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{s.Addr()}, s.HostKey)
}

// Path is a repository's absolute path on the server.
func (s *Server) Path(name string) string { return filepath.Join(s.Repos, name+".git") }

// Find returns sshd's path, or skips t saying how to install it.
func Find(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	t.Skip("sshd is not installed: apt-get install -y openssh-server (.ci/run installs it)")
	return ""
}

// Start runs sshd for the test and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Find(t)
	u, err := user.Current()
	if err != nil {
		t.Fatalf("sshd: current user: %v", err)
	}
	dir := t.TempDir()
	s := &Server{User: u.Username, Dir: dir, Repos: filepath.Join(dir, "repos"), ClientKey: filepath.Join(dir, "client_ed25519")}
	if err := os.Mkdir(s.Repos, 0o755); err != nil {
		t.Fatal(err)
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	for _, k := range []string{hostKey, s.ClientKey} {
		run(t, "", "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "reasonix-test", "-f", k)
	}
	s.HostKey = readPublic(t, hostKey+".pub")
	pub, err := os.ReadFile(s.ClientKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd (as root) wants its privilege separation folder; the Debian
	// package makes it when the service starts, which it does not here.
	if os.Geteuid() == 0 {
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	for attempt := 0; ; attempt++ {
		s.Port = freePort(t)
		cfg := filepath.Join(dir, "sshd_config")
		conf := strings.Join([]string{
			"Port " + strconv.Itoa(s.Port),
			"ListenAddress 127.0.0.1",
			"HostKey " + hostKey,
			"PidFile " + filepath.Join(dir, "sshd.pid"),
			"AuthorizedKeysFile " + authorized,
			"UsePAM no",
			"StrictModes no",
			"PubkeyAuthentication yes",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PermitRootLogin prohibit-password",
			"AllowUsers " + u.Username,
			"AllowTcpForwarding no",
			"X11Forwarding no",
			"PrintMotd no",
			"LogLevel ERROR",
		}, "\n") + "\n"
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "-D", "-e", "-f", cfg)
		log := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatalf("sshd: %v", err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if waitBanner(s.Addr(), done) {
			t.Cleanup(func() {
				cancel()
				<-done
			})
			return s
		}
		cancel()
		<-done
		if attempt == 2 {
			t.Skipf("sshd did not start (it needs to run as root or as the user it serves): %s", log.String())
		}
	}
}

// waitBanner waits until addr answers with an SSH banner, or sshd exits.
func waitBanner(addr string, done chan error) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			_ = c.Close()
			if strings.HasPrefix(line, "SSH-2.0") {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func readPublic(t testing.TB, path string) ssh.PublicKey {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Home makes a throwaway home for the client (t.Setenv("HOME", …) it):
// .ssh/id_ed25519 the authorized key, .ssh/known_hosts vouching for the
// server unless unknown.
func (s *Server) Home(t testing.TB, knownHosts string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(s.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "id_ed25519"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	if knownHosts != "" {
		if err := os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(knownHosts+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// Repo makes the bare repository NAME with one commit of files (path →
// content) on main, and returns the commit.
func (s *Server) Repo(t testing.TB, name string, files map[string]string) string {
	t.Helper()
	run(t, "", "git", "init", "-q", "--bare", "-b", "main", s.Path(name))
	return s.Commit(t, name, files)
}

// Commit adds a commit of files to NAME's main and returns it.
func (s *Server) Commit(t testing.TB, name string, files map[string]string) string {
	t.Helper()
	work := t.TempDir()
	run(t, work, "git", "init", "-q", "-b", "main")
	if out := run(t, work, "git", "ls-remote", s.Path(name), "main"); out != "" {
		run(t, work, "git", "fetch", "-q", s.Path(name), "main")
		run(t, work, "git", "reset", "-q", "--hard", "FETCH_HEAD")
	}
	for p, content := range files {
		full := filepath.Join(work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, work, "git", "add", "-A")
	run(t, work, "git", "-c", "user.name=t", "-c", "user.email=t@example.test", "commit", "-q", "-m", "c")
	run(t, work, "git", "push", "-q", s.Path(name), "HEAD:main")
	return run(t, work, "git", "rev-parse", "HEAD")
}

// run runs a command (no shell) and returns its trimmed output.
func run(t testing.TB, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}
