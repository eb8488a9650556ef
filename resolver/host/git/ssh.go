package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/crypto/ssh"

	"reasonix.io/plugind"
)

// sshSession is an upload-pack session over SSH: git's own protocol (v0)
// on the standard streams of "git-upload-pack '<path>'", encoded and
// decoded by go-git's packp, over golang.org/x/crypto/ssh.
//
// go-git's ssh transport is not used as a whole on purpose: its runner
// reads the process-wide DefaultSSHConfig (~/.ssh/config) for every
// connection, dials with proxy.Dial (no dialer of ours, so neither the
// connect timeout nor the team mirror's refusal of non-public addresses
// could apply) and takes no context. Here one SSH connection per session
// is dialed through host.NewDialer's dialer, with the host keys and keys of
// SSHConfig (sshauth.go), and each upload-pack request gets an exec of its
// own on it (an exec serves one advertisement and one pack, then exits).
type sshSession struct {
	r    *Repo
	ep   *transport.Endpoint
	path string

	mu     sync.Mutex
	client *ssh.Client
	// pending is an exec whose advertisement was read and whose request
	// is still to be made.
	pending *sshExec
	adv     *packp.AdvRefs
}

// sshExec is one git-upload-pack run.
type sshExec struct {
	sess   *ssh.Session
	stdin  io.WriteCloser
	stdout io.Reader
	stderr *limitedBuffer
}

// newSSHSession checks the endpoint; nothing is dialed until asked.
func (r *Repo) newSSHSession(ep *transport.Endpoint) (*sshSession, error) {
	if r.cfg.SSH == nil {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "%s: no SSH configuration", r.src.Key())
	}
	p := ep.Path
	if strings.HasPrefix(p, "/~") {
		p = p[1:] // as git sends ssh://host/~/x: relative to the account's home
	}
	if p == "" || strings.HasPrefix(p, "-") {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s: bad SSH repository path %q", r.src.Key(), p)
	}
	return &sshSession{r: r, ep: ep, path: p}, nil
}

// addr is the dialed host:port, as known_hosts names it.
func (s *sshSession) addr() string {
	port := s.ep.Port
	if port <= 0 {
		port = 22
	}
	return net.JoinHostPort(s.ep.Host, strconv.Itoa(port))
}

// connect dials once per session.
func (s *sshSession) connect(ctx context.Context) (*ssh.Client, error) {
	if s.client != nil {
		return s.client, nil
	}
	c, err := s.r.cfg.SSH.dial(ctx, s.addr(), s.ep.User)
	if err != nil {
		return nil, err
	}
	s.client = c
	return c, nil
}

// start runs git-upload-pack and reads its advertisement.
func (s *sshSession) start(ctx context.Context) (*sshExec, *packp.AdvRefs, error) {
	c, err := s.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	sess, err := c.NewSession()
	if err != nil {
		return nil, nil, fmt.Errorf("ssh session: %w", err)
	}
	x := &sshExec{sess: sess, stderr: &limitedBuffer{max: 8 << 10}}
	sess.Stderr = x.stderr
	if x.stdin, err = sess.StdinPipe(); err == nil {
		var out io.Reader
		if out, err = sess.StdoutPipe(); err == nil {
			x.stdout = out
			err = sess.Start("git-upload-pack " + shellQuote(s.path))
		}
	}
	if err != nil {
		_ = sess.Close()
		return nil, nil, fmt.Errorf("ssh: starting git-upload-pack: %w", err)
	}
	ar := packp.NewAdvRefs()
	if err := ar.Decode(x.stdout); err != nil {
		_ = sess.Wait()
		_ = sess.Close()
		return nil, nil, x.advError(err)
	}
	if ar.IsEmpty() {
		_ = sess.Close()
		return nil, nil, transport.ErrEmptyRemoteRepository
	}
	transport.FilterUnsupportedCapabilities(ar.Capabilities)
	return x, ar, nil
}

// advError says why no advertisement came: git-upload-pack's own words
// (a missing repository, a refused path) from its stderr or error line.
func (x *sshExec) advError(err error) error {
	if errors.Is(err, packp.ErrEmptyAdvRefs) {
		return transport.ErrEmptyRemoteRepository
	}
	msg := strings.TrimSpace(x.stderr.String())
	var line *pktline.ErrorLine
	if errors.As(err, &line) {
		msg = line.Text
	}
	if strings.Contains(msg, "does not appear to be a git repository") || strings.Contains(msg, "not found") || strings.Contains(msg, "No such") {
		return fmt.Errorf("%w: %s", transport.ErrRepositoryNotFound, msg)
	}
	if msg != "" {
		return fmt.Errorf("git-upload-pack: %s", msg)
	}
	return fmt.Errorf("reading the advertisement: %w", err)
}

// AdvertisedReferences implements transport.Session.
func (s *sshSession) AdvertisedReferences() (*packp.AdvRefs, error) {
	return s.AdvertisedReferencesContext(context.Background())
}

// AdvertisedReferencesContext implements transport.Session: the exec it
// starts serves the next UploadPack.
func (s *sshSession) AdvertisedReferencesContext(ctx context.Context) (*packp.AdvRefs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.adv != nil {
		return s.adv, nil
	}
	x, ar, err := s.start(ctx)
	if err != nil {
		return nil, err
	}
	s.pending, s.adv = x, ar
	return ar, nil
}

// UploadPack implements transport.UploadPackSession: the request on the
// pending exec (or a new one), the response streamed from its stdout.
func (s *sshSession) UploadPack(ctx context.Context, req *packp.UploadPackRequest) (*packp.UploadPackResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	x := s.pending
	s.pending = nil
	var err error
	if x == nil {
		x, _, err = s.start(ctx)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// A cancelled context ends the exec, so no read below outlives it.
	stop := context.AfterFunc(ctx, func() { _ = x.sess.Close() })
	if err := req.UploadRequest.Encode(x.stdin); err == nil {
		if err = req.UploadHaves.Encode(x.stdin, true); err == nil {
			if err = pktline.NewEncoder(x.stdin).Encodef("done\n"); err == nil {
				err = x.stdin.Close()
			}
		}
		if err != nil {
			stop()
			_ = x.sess.Close()
			return nil, fmt.Errorf("ssh: sending the upload-pack request: %w", err)
		}
	}
	res := packp.NewUploadPackResponse(req)
	if err := res.Decode(&execReader{x: x, stop: stop}); err != nil {
		stop()
		_ = x.sess.Close()
		if msg := strings.TrimSpace(x.stderr.String()); msg != "" {
			return nil, fmt.Errorf("git-upload-pack: %s (%v)", msg, err)
		}
		return nil, fmt.Errorf("decoding the upload-pack response: %w", err)
	}
	return res, nil
}

// Close implements io.Closer: the pending exec and the connection.
func (s *sshSession) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != nil {
		_ = s.pending.sess.Close()
		s.pending = nil
	}
	if s.client != nil {
		err := s.client.Close()
		s.client = nil
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
	}
	return nil
}

// execReader is an exec's stdout as the response's body: closing it ends
// the exec; a read error carries what upload-pack said on stderr.
type execReader struct {
	x    *sshExec
	stop func() bool
}

func (e *execReader) Read(p []byte) (int, error) {
	n, err := e.x.stdout.Read(p)
	if err != nil && err != io.EOF {
		if msg := strings.TrimSpace(e.x.stderr.String()); msg != "" {
			err = fmt.Errorf("git-upload-pack: %s (%w)", msg, err)
		}
	}
	return n, err
}

func (e *execReader) Close() error {
	e.stop()
	_ = e.x.sess.Close()
	return nil
}

// shellQuote quotes s for the remote shell as git's sq_quote_buf does:
// in single quotes, ' and ! closed, escaped and reopened.
func shellQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\'' || c == '!' {
			b.WriteString(`'\`)
			b.WriteByte(c)
			b.WriteByte('\'')
			continue
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// limitedBuffer keeps the first max bytes written (a remote's stderr, for
// messages), safe for the session's copying goroutine.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
