package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// The daemon's proof of identity (SPEC §12). serve.addr says where the
// home's daemon listens, but a daemon killed by SIGKILL leaves it behind,
// and another local user may then listen on that port. So `reasonix
// studio` sends the bearer token only to a listener that first proves it
// holds the token too, without the token crossing the connection:
//
//	client → POST /auth/proof {"nonce": 32 random bytes, hex}
//	daemon → {"proof": HMAC-SHA256(token, proofLabel ‖ address ‖ nonce)}
//
// The address is the one the connection reached, as the daemon sees it
// (its local address) and as the client dialed it (the remote address of
// its connection). A squatter that relays the nonce to a real daemon
// elsewhere gets a proof for that daemon's address, which the client
// refuses. The client then sends the token over that same connection
// (ProveDaemon), so nothing can take the port between proof and token.
const (
	proofLabel = "reasonix serve proof v1"
	// nonceBytes is the size of a proof's nonce.
	nonceBytes = 32
)

// ProofMAC is the proof, for the daemon holding token, that it listens at
// addr (host:port) and answered nonce (hex).
func ProofMAC(token, addr, nonce string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(proofLabel + "\x00" + addr + "\x00" + nonce))
	return m.Sum(nil)
}

// canonicalAddr writes a connection's address one way on both sides: an
// IPv4 address seen through an IPv6 socket loses its ::ffff: prefix.
func canonicalAddr(a net.Addr) (string, error) {
	if a == nil {
		return "", fmt.Errorf("no address")
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return "", fmt.Errorf("address %q: %w", a.String(), err)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String(), nil
}

// validNonce: nonceBytes bytes as lowercase hex.
func validNonce(n string) bool {
	_, err := hex.DecodeString(n)
	return err == nil && len(n) == 2*nonceBytes && n == strings.ToLower(n)
}

// POST /auth/proof {nonce} (public): the daemon's proof that it holds the
// token and listens where the client connected. It says nothing else, and
// a proof is good only for its own address and nonce.
func (s *Server) proof(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Nonce string `json:"nonce"`
	}
	if !s.decode(w, r, &body) {
		return
	}
	if !validNonce(body.Nonce) {
		writeError(w, http.StatusBadRequest, CodeBadRequest, `"nonce" must be %d random bytes as lowercase hex (%d characters)`, nonceBytes, 2*nonceBytes)
		return
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	addr, err := canonicalAddr(local)
	if err != nil {
		s.fail(w, r, fmt.Errorf("proof: the connection's local address: %w", err))
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"ok": true, "addr": addr, "proof": hex.EncodeToString(ProofMAC(s.proofKey, addr, body.Nonce)),
	})
}
