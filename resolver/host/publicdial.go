package host

import (
	"fmt"
	"net/netip"
	"syscall"
)

// AddressRefusedError is a connection NetConfig.PublicOnly refused: the
// address it would have reached is not a public one.
type AddressRefusedError struct {
	Addr netip.Addr
	Kind string // "loopback", "private", "link-local"…
}

func (e *AddressRefusedError) Error() string {
	return fmt.Sprintf("refusing to connect to %s, a %s address: only public addresses may be reached upstream (reasonix mirror serve --allow-private-upstreams allows others)", e.Addr, e.Kind)
}

// refuseNonPublic is a net.Dialer Control hook: it runs on the address
// actually being connected to, after DNS resolution, for every connection —
// redirects, retries and reconnects included — so neither a host name
// pointing inside the network nor DNS rebinding between a check and the
// dial can reach it.
func refuseNonPublic(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to %q: not an IP address and port", address)
	}
	if kind := nonPublic(ap.Addr()); kind != "" {
		return &AddressRefusedError{Addr: ap.Addr().WithZone(""), Kind: kind}
	}
	return nil
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT, cloud-internal services
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	nat64       = netip.MustParsePrefix("64:ff9b::/96") // embeds an IPv4 address
	siteLocal   = netip.MustParsePrefix("fec0::/10")    // deprecated, still routed inside some networks
)

// nonPublic names the kind of a non-public address, "" for a public one.
func nonPublic(a netip.Addr) string {
	a = a.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	if nat64.Contains(a) {
		b := a.As16()
		if kind := nonPublic(netip.AddrFrom4([4]byte(b[12:]))); kind != "" {
			return kind + " (through NAT64)"
		}
	}
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsUnspecified(), thisNetwork.Contains(a):
		return "unspecified"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case sharedSpace.Contains(a):
		return "shared (carrier-grade NAT)"
	case siteLocal.Contains(a):
		return "site-local"
	}
	return ""
}
