package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrNotProven is returned by ProveDaemon when something answers at the
// address but does not prove it is the daemon holding the token.
var ErrNotProven = errors.New("did not prove it is this home's daemon")

// maxDaemonAnswer bounds what a ProvenDaemon reads of one answer.
const maxDaemonAnswer = 1 << 20

// ProvenDaemon is one connection to a listener that proved it holds the
// token (see proof.go). Client sends every request over that connection
// and never dials again, so what it sends (the bearer token) reaches only
// the listener that gave the proof.
type ProvenDaemon struct {
	// Addr is the address the connection reached.
	Addr   string
	Client *http.Client
	conn   *provenConn
}

// Close closes the connection.
func (d *ProvenDaemon) Close() error { return d.conn.close() }

// ProveDaemon connects to addr and asks for the daemon's proof (never
// sending token). It fails with an error wrapping ErrNotProven when the
// listener answers without a valid proof, and with another error when
// nothing usable answers at all.
func ProveDaemon(ctx context.Context, addr, token string) (*ProvenDaemon, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	reached, err := canonicalAddr(conn.RemoteAddr())
	if err == nil && !isLoopbackHost(hostWithoutPort(reached)) {
		err = fmt.Errorf("%s reached %s, which is not a loopback address", addr, reached)
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	pc := &provenConn{conn: conn, br: bufio.NewReader(conn)}
	d := &ProvenDaemon{Addr: reached, conn: pc, Client: &http.Client{
		Transport: pc,
		// Nothing is followed: a redirect could only lead elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}}
	if err := d.askProof(ctx, token); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

func (d *ProvenDaemon) askProof(ctx context.Context, token string) error {
	b := make([]byte, nonceBytes)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("proof nonce: %w", err)
	}
	nonce := hex.EncodeToString(b)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+d.Addr+"/auth/proof", strings.NewReader(`{"nonce":"`+nonce+`"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w (%v)", d.Addr, ErrNotProven, err)
	}
	defer resp.Body.Close()
	var body struct {
		Proof string `json:"proof"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return fmt.Errorf("%s answered %d to the proof request: %w", d.Addr, resp.StatusCode, ErrNotProven)
	}
	got, err := hex.DecodeString(body.Proof)
	if err != nil || !hmac.Equal(got, ProofMAC(token, d.Addr, nonce)) {
		return fmt.Errorf("%s answered with a wrong proof: %w", d.Addr, ErrNotProven)
	}
	return nil
}

// provenConn is an http.RoundTripper over one connection: requests go one
// at a time, each answer is read whole before the next request, and once
// the connection ends every request fails rather than dialing again.
type provenConn struct {
	mu     sync.Mutex
	conn   net.Conn
	br     *bufio.Reader
	closed bool
}

func (c *provenConn) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.Body != nil {
		defer req.Body.Close()
	}
	if c.closed {
		return nil, errors.New("the connection to the proven daemon is closed; not dialing again")
	}
	deadline := time.Now().Add(10 * time.Second)
	if d, ok := req.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	// A cancelled context ends the exchange at once.
	stop := context.AfterFunc(req.Context(), func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	resp, err := c.exchange(req, deadline)
	if err != nil || resp.Close {
		c.closed = true
		_ = c.conn.Close()
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (c *provenConn) exchange(req *http.Request, deadline time.Time) (*http.Response, error) {
	if err := c.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if err := req.Write(c.conn); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(c.br, req)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDaemonAnswer+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(data) > maxDaemonAnswer {
		return nil, fmt.Errorf("an answer of more than %d bytes", maxDaemonAnswer)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}

func (c *provenConn) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.conn.Close()
}
