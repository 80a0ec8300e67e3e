//go:build linux

// Package netlab builds networks out of Linux network namespaces for
// tests: a public network (a bridge) with hosts on it, and homes — a host
// behind a NAT router of its own, whose NAT maps endpoint-independently
// (nftables masquerade, which keeps a flow's source port: what STUN
// hole-punching needs) or symmetrically (masquerade random: a new port per
// destination, which only a TURN relay gets through). Everything lives in
// namespaces the Lab made, with documentation addresses (203.0.113.0/24
// public, 10.N.0.0/24 per home), and goes when the test ends.
//
// It needs root, iproute2, nftables and conntrack (.ci/install-netns
// installs them).
// New skips the test when they are missing, or fails it when
// MESHMPI_NETNS_TESTS=require (CI, which runs as root).
package netlab

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// NAT is how a home's router maps its host's flows.
type NAT int

const (
	// EndpointIndependent keeps one mapping per local address and port,
	// whatever the destination (masquerade keeps the source port): a
	// STUN server and a peer see the same address, so peers connect
	// directly through server-reflexive candidates.
	EndpointIndependent NAT = iota + 1
	// Symmetric maps every destination anew (masquerade random): the
	// address a STUN server saw is useless to a peer, so two such homes
	// connect only through a relay.
	Symmetric
)

func (n NAT) String() string {
	switch n {
	case EndpointIndependent:
		return "endpoint-independent"
	case Symmetric:
		return "symmetric"
	}
	return "no NAT"
}

// Host is a machine of the lab: a namespace with one address.
type Host struct {
	NS string // the namespace its processes run in
	IP net.IP // its own address
	// Public is the address the public network sees its flows come from:
	// IP on the public network, its router's behind a NAT.
	Public net.IP
	// Router is the namespace of its NAT router; "" on the public network.
	Router string
}

// Lab is the namespaces one test made.
type Lab struct {
	t      testing.TB
	prefix string
	wan    string // the namespace of the public bridge

	mu     sync.Mutex
	nss    []string
	public int // public hosts made
	homes  int // homes made
}

// Check reports why a lab cannot be made here, or nil.
func Check() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("network namespaces need root")
	}
	for _, tool := range []string{"ip", "nft", "conntrack"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found (Debian's iproute2, nftables and conntrack; .ci/install-netns)", tool)
		}
	}
	return nil
}

// New makes an empty lab (the public network) for t, removed when t ends.
func New(t testing.TB) *Lab {
	t.Helper()
	if err := Check(); err != nil {
		if os.Getenv("MESHMPI_NETNS_TESTS") == "require" {
			t.Fatalf("netlab: %v (MESHMPI_NETNS_TESTS=require)", err)
		}
		t.Skipf("netlab: %v", err)
	}
	l := &Lab{t: t, prefix: "mm" + strings.ToLower(rand.Text()[:6])}
	t.Cleanup(l.close)
	l.wan = l.namespace("wan")
	l.run(l.wan, "ip", "link", "add", "br0", "type", "bridge")
	l.run(l.wan, "ip", "link", "set", "br0", "up")
	return l
}

// PublicHost adds a host on the public network.
func (l *Lab) PublicHost(name string) Host {
	l.mu.Lock()
	l.public++
	n := l.public
	l.mu.Unlock()
	ns := l.namespace(name)
	ip := net.IPv4(203, 0, 113, byte(9+n))
	l.plug(ns, "eth0", fmt.Sprintf("h%d", n), ip)
	return Host{NS: ns, IP: ip, Public: ip}
}

// Home adds a host behind a NAT router of its own.
func (l *Lab) Home(name string, nat NAT) Host {
	l.mu.Lock()
	l.homes++
	n := l.homes
	l.mu.Unlock()
	router, ns := l.namespace(name+"-r"), l.namespace(name)
	wanIP := net.IPv4(203, 0, 113, byte(99+n))
	l.plug(router, "eth0", fmt.Sprintf("r%d", n), wanIP)
	l.run(router, "ip", "link", "add", "eth1", "type", "veth", "peer", "name", "eth0", "netns", ns)
	gw, ip := net.IPv4(10, byte(n), 0, 1), net.IPv4(10, byte(n), 0, 2)
	l.run(router, "ip", "addr", "add", gw.String()+"/24", "dev", "eth1")
	l.run(router, "ip", "link", "set", "eth1", "up")
	l.run(ns, "ip", "addr", "add", ip.String()+"/24", "dev", "eth0")
	l.run(ns, "ip", "link", "set", "eth0", "up")
	l.run(ns, "ip", "route", "add", "default", "via", gw.String())
	l.run(router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	masq := "masquerade"
	if nat == Symmetric {
		masq = "masquerade random"
	}
	// Like a home router, it drops what arrives unasked: a peer's probe
	// that comes before this side's own has opened the mapping is
	// dropped before conntrack confirms it, so it cannot hold the port
	// the outgoing flow is about to be mapped to (which made Linux pick
	// another port, turning the mapping symmetric).
	l.nft(router, `table ip nat {
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "eth0" `+masq+`
	}
}
table ip filter {
	chain input {
		type filter hook input priority filter; policy accept;
		iifname "eth0" ct state new drop
	}
	chain forward {
		type filter hook forward priority filter; policy accept;
		iifname "eth0" ct state new drop
	}
}`)
	return Host{NS: ns, IP: ip, Public: wanIP, Router: router}
}

// Command is a command that runs in h's namespace.
func (l *Lab) Command(h Host, name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// namespace makes a namespace with its loopback up.
func (l *Lab) namespace(name string) string {
	ns := l.prefix + "-" + name
	l.run("", "ip", "netns", "add", ns)
	l.mu.Lock()
	l.nss = append(l.nss, ns)
	l.mu.Unlock()
	l.run(ns, "ip", "link", "set", "lo", "up")
	return ns
}

// plug connects ns's interface ifname to the public bridge with address
// ip; port names the bridge's end.
func (l *Lab) plug(ns, ifname, port string, ip net.IP) {
	l.run(ns, "ip", "link", "add", ifname, "type", "veth", "peer", "name", port, "netns", l.wan)
	l.run(l.wan, "ip", "link", "set", port, "master", "br0", "up")
	l.run(ns, "ip", "addr", "add", ip.String()+"/24", "dev", ifname)
	l.run(ns, "ip", "link", "set", ifname, "up")
}

// nft loads an nftables ruleset into ns.
func (l *Lab) nft(ns, rules string) {
	l.t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("netlab: nft in %s: %v\n%s", ns, err, out)
	}
}

// run runs a command in ns ("": the test's own) and fails the test if it
// fails.
func (l *Lab) run(ns string, args ...string) {
	l.t.Helper()
	if ns != "" {
		args = append([]string{"ip", "netns", "exec", ns}, args...)
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		l.t.Fatalf("netlab: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// close removes every namespace; a namespace's veths and rules go with
// it. Processes still running in one keep it alive until they end, so
// tests stop theirs first.
func (l *Lab) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.nss) - 1; i >= 0; i-- {
		if out, err := exec.Command("ip", "netns", "del", l.nss[i]).CombinedOutput(); err != nil {
			l.t.Errorf("netlab: ip netns del %s: %v\n%s", l.nss[i], err, out)
		}
	}
	l.nss = nil
}

// Cut drops every packet h sends or receives on its network (not its
// loopback), as a pulled cable or a dead Wi-Fi does; Restore ends it.
func (l *Lab) Cut(h Host) {
	l.nft(h.NS, `table inet outage {
	chain in {
		type filter hook input priority -10; policy drop;
		iifname "lo" accept
	}
	chain out {
		type filter hook output priority -10; policy drop;
		oifname "lo" accept
	}
}`)
}

// ExpireUDP forgets the UDP mappings h's NAT router holds, as a carrier
// NAT whose short UDP timeout ran out does, while TCP flows (the
// signaling websocket) keep theirs: behind a symmetric NAT the next
// datagram out leaves from a new port, so a relay allocation made from
// the old one is unreachable for good.
func (l *Lab) ExpireUDP(h Host) {
	l.t.Helper()
	if h.Router == "" {
		l.t.Fatalf("netlab: %s has no NAT", h.NS)
	}
	l.run(h.Router, "conntrack", "-D", "-p", "udp")
}

// Restore ends a Cut.
func (l *Lab) Restore(h Host) {
	l.run(h.NS, "nft", "delete", "table", "inet", "outage")
}

// FlushNAT forgets every mapping h's NAT router holds (conntrack -F), as
// a router that reboots or times its mappings out does: the next packet
// out opens a new one.
func (l *Lab) FlushNAT(h Host) {
	l.t.Helper()
	if h.Router == "" {
		l.t.Fatalf("netlab: %s has no NAT", h.NS)
	}
	l.run(h.Router, "conntrack", "-F")
}
