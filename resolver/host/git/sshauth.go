package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
)

// SSHConfig is how SSH repositories are reached, shared by every Repo of a
// host stack (SPEC §4): the user's agent and key files, host keys from
// known_hosts, and the stack's dialer. Nothing process-wide is read or set:
// no ~/.ssh/config, no go-git globals.
type SSHConfig struct {
	// Dial makes the TCP connection (host.NewDialer's: the connect
	// timeout, and the team mirror's refusal of non-public addresses).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Dir is the user's ~/.ssh: known_hosts and the key files
	// id_ed25519, id_ecdsa and id_rsa (in that order, after the agent's).
	Dir string
	// AgentSock is SSH_AUTH_SOCK; "" for no agent.
	AgentSock string
	// User is the account when the URL names none (ssh's default: the
	// local user's name).
	User string
	// Timeout bounds the connect and the handshake (default 30s).
	Timeout time.Duration
	Log     *slog.Logger
}

// keyFiles are the default identities ssh tries, in its order.
var keyFiles = []string{"id_ed25519", "id_ecdsa", "id_rsa"}

// HostKeyError is a host key known_hosts does not vouch for: unknown, or
// changed. Final: no retry, fallback or cached answer may stand in for it.
type HostKeyError struct {
	Host        string // as known_hosts names it: "git.example.test", "[host]:2222"
	Fingerprint string // "ED25519 SHA256:…"
	Changed     bool
	KnownHosts  string
	hostname    string
	port        string
}

func (e *HostKeyError) Error() string {
	keyscan := "ssh-keyscan " + e.hostname
	if e.port != "22" {
		keyscan = "ssh-keyscan -p " + e.port + " " + e.hostname
	}
	if e.Changed {
		return fmt.Sprintf("refusing %s: its SSH host key has CHANGED (it now presents %s, which %s does not hold for it); someone may be intercepting the connection. If the host's administrator confirms the new key, remove the old one with `ssh-keygen -R '%s'` and add the new one (`%s >> %s`, then compare the fingerprint)", e.Host, e.Fingerprint, e.KnownHosts, e.Host, keyscan, e.KnownHosts)
	}
	return fmt.Sprintf("refusing %s: its SSH host key (%s) is not in %s; verify that fingerprint with the host's administrator, then add it (`%s >> %s`, and compare with `ssh-keygen -lf %s`)", e.Host, e.Fingerprint, e.KnownHosts, keyscan, e.KnownHosts, e.KnownHosts)
}

func (e *HostKeyError) Unwrap() error { return host.ErrRefused }

// dial connects to addr (host:port) as user, checking the host key and
// authenticating with the agent's keys and the key files.
func (c *SSHConfig) dial(ctx context.Context, addr, user string) (*ssh.Client, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = host.DefaultTimeout
	}
	if user == "" {
		user = c.User
	}
	auth, notes, closeAgent := c.authMethods()
	defer closeAgent()
	var keyErr *HostKeyError
	cfg := &ssh.ClientConfig{
		User:    user,
		Auth:    auth,
		Timeout: timeout,
	}
	if err := c.hostKeys(addr, cfg, &keyErr); err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := c.Dial(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// The handshake is bounded too: a server that accepts and says
	// nothing costs the timeout, not forever.
	_ = conn.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		_ = conn.Close()
		switch {
		case keyErr != nil:
			return nil, plugind.WithCode(plugind.CodeSourceUnreadable, keyErr)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, &plugind.Error{Code: plugind.CodeSourceUnreadable, Err: host.ErrRefused,
				Msg: fmt.Sprintf("ssh %s@%s: no key was accepted (tried: %s)", user, addr, strings.Join(notes, "; "))}
		}
		return nil, fmt.Errorf("ssh %s: %w", addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(cc, chans, reqs), nil
}

// hostKeys sets cfg's host key check from known_hosts: the algorithms
// known for addr first (so a host that has several keys presents the one
// on file), and any other key refused as unknown or changed (*keyErr).
func (c *SSHConfig) hostKeys(addr string, cfg *ssh.ClientConfig, keyErr **HostKeyError) error {
	file := filepath.Join(c.Dir, "known_hosts")
	hostname, port, _ := net.SplitHostPort(addr)
	refuse := func(key ssh.PublicKey, changed bool) error {
		*keyErr = &HostKeyError{Host: knownhosts.Normalize(addr), Fingerprint: key.Type() + " " + ssh.FingerprintSHA256(key), Changed: changed, KnownHosts: file, hostname: hostname, port: port}
		return *keyErr
	}
	db, err := knownhosts.NewDB(file)
	if errors.Is(err, fs.ErrNotExist) {
		cfg.HostKeyCallback = func(_ string, _ net.Addr, key ssh.PublicKey) error { return refuse(key, false) }
		return nil
	}
	if err != nil {
		return plugind.Errorf(plugind.CodeSourceUnreadable, "reading %s: %v", file, err)
	}
	check := db.HostKeyCallback()
	cfg.HostKeyAlgorithms = db.HostKeyAlgorithms(addr)
	cfg.HostKeyCallback = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := check(hostname, remote, key)
		switch {
		case err == nil:
			return nil
		case knownhosts.IsHostKeyChanged(err):
			return refuse(key, true)
		case knownhosts.IsHostUnknown(err):
			return refuse(key, false)
		}
		return err
	}
	return nil
}

// authMethods offers the agent's keys, then the key files'. An encrypted
// key file is skipped (it would need a passphrase prompt): the notes say
// so, for the error when no key is accepted, and the log.
func (c *SSHConfig) authMethods() (auth []ssh.AuthMethod, notes []string, closeAgent func()) {
	closeAgent = func() {}
	var signers []ssh.Signer
	if c.AgentSock != "" {
		if conn, err := net.DialTimeout("unix", c.AgentSock, 5*time.Second); err != nil {
			notes = append(notes, fmt.Sprintf("the SSH agent at SSH_AUTH_SOCK could not be reached (%v)", err))
		} else {
			closeAgent = func() { _ = conn.Close() }
			if s, err := agent.NewClient(conn).Signers(); err != nil {
				notes = append(notes, fmt.Sprintf("the SSH agent did not list its keys (%v)", err))
			} else {
				signers = append(signers, s...)
				notes = append(notes, fmt.Sprintf("%d key(s) of the SSH agent", len(s)))
			}
		}
	} else {
		notes = append(notes, "no SSH agent (SSH_AUTH_SOCK is not set)")
	}
	for _, name := range keyFiles {
		p := filepath.Join(c.Dir, name)
		pem, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var missing *ssh.PassphraseMissingError
		s, perr := ssh.ParsePrivateKey(pem)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s unreadable (%v)", p, err))
		case errors.As(perr, &missing):
			note := fmt.Sprintf("%s skipped: it is encrypted (add it to your agent with `ssh-add %s`)", p, p)
			notes = append(notes, note)
			if c.Log != nil {
				c.Log.Warn(note)
			}
		case perr != nil:
			notes = append(notes, fmt.Sprintf("%s skipped: %v", p, perr))
		default:
			signers = append(signers, s)
			notes = append(notes, p)
		}
	}
	if len(signers) > 0 {
		auth = []ssh.AuthMethod{ssh.PublicKeys(signers...)}
	}
	return auth, notes, closeAgent
}
