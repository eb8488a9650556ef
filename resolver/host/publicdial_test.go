package host

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestNonPublic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr, kind string
	}{
		{"127.0.0.1", "loopback"}, {"127.8.9.10", "loopback"}, {"::1", "loopback"},
		{"10.1.2.3", "private"}, {"172.16.0.1", "private"}, {"172.31.255.255", "private"}, {"192.168.1.1", "private"}, {"fd00::1", "private"},
		{"169.254.169.254", "link-local"}, {"fe80::1", "link-local"},
		{"0.0.0.0", "unspecified"}, {"0.1.2.3", "unspecified"}, {"::", "unspecified"},
		{"239.1.2.3", "multicast"}, {"ff02::1", "link-local"},
		{"100.64.0.1", "shared (carrier-grade NAT)"}, {"100.100.100.200", "shared (carrier-grade NAT)"},
		{"fec0::1", "site-local"},
		{"::ffff:10.0.0.1", "private"}, {"::ffff:127.0.0.1", "loopback"},
		{"64:ff9b::a00:1", "private (through NAT64)"}, {"64:ff9b::7f00:1", "loopback (through NAT64)"},
		{"140.82.112.3", ""}, {"8.8.8.8", ""}, {"172.32.0.1", ""}, {"100.128.0.1", ""},
		{"2606:50c0:8000::153", ""}, {"64:ff9b::808:808", ""},
	} {
		if got := nonPublic(netip.MustParseAddr(tc.addr)); got != tc.kind {
			t.Errorf("%s: %q, want %q", tc.addr, got, tc.kind)
		}
	}
}

// With PublicOnly, a connection is refused on the address it would reach,
// after DNS resolution: an IP literal on loopback, and a name that
// resolves to loopback (localhost, as any DNS name pointing inside would).
// Retries do not repeat a refusal. Without it, loopback is reachable as
// before.
func TestPublicOnlyRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	guarded := &http.Client{Transport: NewTransport(NetConfig{PublicOnly: true, Timeout: 5 * time.Second})}
	for _, target := range []string{srv.URL, "http://localhost:" + port, "http://[::ffff:127.0.0.1]:" + port} {
		resp, err := guarded.Get(target)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: answered %s, want a refusal", target, resp.Status)
			continue
		}
		var refused *AddressRefusedError
		if !errors.As(err, &refused) || !Fatal(err) || !strings.Contains(err.Error(), "--allow-private-upstreams") {
			t.Errorf("%s: %v, want an AddressRefusedError naming the flag", target, err)
		}
	}
	retrying := NewRetryingClient(NewTransport(NetConfig{PublicOnly: true}), NetConfig{})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	start := time.Now()
	if _, err := retrying.StandardClient().Do(req); err == nil || !errors.As(err, new(*AddressRefusedError)) || time.Since(start) > time.Second {
		t.Errorf("retrying client: %v after %s, want one refusal, not retried", err, time.Since(start))
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback server was reached %d times", hits.Load())
	}
	open := &http.Client{Transport: NewTransport(NetConfig{Timeout: 5 * time.Second})}
	resp, err := open.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatal("without PublicOnly, loopback should be reachable")
	}
}

// The hook refuses private and link-local addresses in a real dial, before
// connecting. Should it ever let one through, the dial is stopped here
// all the same: tests send nothing beyond loopback.
func TestPublicOnlyRefusesPrivateAndLinkLocalDials(t *testing.T) {
	t.Parallel()
	errLetThrough := errors.New("the hook let the address through")
	d := &net.Dialer{Timeout: time.Second, Control: func(network, address string, c syscall.RawConn) error {
		if err := refuseNonPublic(network, address, c); err != nil {
			return err
		}
		return errLetThrough
	}}
	for _, addr := range []string{"10.255.255.1:9", "172.20.0.1:443", "192.168.0.1:80", "169.254.169.254:80", "[fe80::1]:9", "[fd12::1]:443", "100.100.100.200:80"} {
		_, err := d.DialContext(context.Background(), "tcp", addr)
		var refused *AddressRefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%s: %v, want an AddressRefusedError", addr, err)
		}
	}
}
