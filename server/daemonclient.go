package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"reasonix.io/plugind/resolver/host"
)

// ErrNotProven is returned by ProveDaemon when something answers at the
// address but does not prove it is the daemon holding the token.
var ErrNotProven = errors.New("did not prove it is this home's daemon")

// maxDaemonAnswer bounds what a ProvenDaemon reads of one answer.
const maxDaemonAnswer = 1 << 20

// ProvenDaemon is one connection to a listener that proved it holds the
// token (see proof.go). Client sends every request over that connection,
// one at a time, and never dials again, so what it sends (the bearer
// token) reaches only the listener that gave the proof.
type ProvenDaemon struct {
	// Addr is the address the connection reached.
	Addr      string
	Client    *http.Client
	transport *http.Transport
	handed    atomic.Bool // the connection went to the transport: none is dialed after it
}

// Close closes the connection.
func (d *ProvenDaemon) Close() error {
	d.handed.Store(true)
	d.transport.CloseIdleConnections()
	return nil
}

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
	if err == nil && !host.IsLoopbackHost(reached) {
		err = fmt.Errorf("%s reached %s, which is not a loopback address", addr, reached)
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	d := &ProvenDaemon{Addr: reached}
	d.transport = &http.Transport{
		// The proven connection, once; then no other.
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			if d.handed.Swap(true) {
				return nil, errors.New("the connection to the proven daemon is closed; not dialing again")
			}
			return conn, nil
		},
		MaxConnsPerHost: 1,
	}
	d.Client = &http.Client{
		Transport: wholeAnswers{d.transport},
		// Nothing is followed: a redirect could only lead elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
	if err := d.askProof(ctx, token); err != nil {
		if !d.handed.Swap(true) {
			_ = conn.Close() // never reached the transport
		}
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

func (d *ProvenDaemon) askProof(ctx context.Context, token string) error {
	nonce := randomString(nonceBytes, hex.EncodeToString)
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

// wholeAnswers reads each answer whole (at most maxDaemonAnswer bytes)
// before handing it back, so the one connection is free for the next
// request whatever the caller leaves unread.
type wholeAnswers struct{ http.RoundTripper }

func (t wholeAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDaemonAnswer+1))
	resp.Body.Close()
	if err == nil && len(data) > maxDaemonAnswer {
		err = fmt.Errorf("an answer of more than %d bytes", maxDaemonAnswer)
	}
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}
