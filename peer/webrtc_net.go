//go:build !js && !wasip1

package peer

import (
	"net"

	"github.com/pion/transport/v4"
	"github.com/pion/transport/v4/stdnet"
)

// bufferedNet is the host network with larger UDP socket buffers. pion's
// SCTP sends bursts of ~1.2 KB datagrams; with the kernel's default 212 KB
// buffers a loaded receiver drops hundreds per second and SCTP stalls for
// its 1 s minimum retransmission timeout (reference/webrtc.md: 5–20 MB/s
// instead of 60–70). Every UDP socket pion opens through it gets size-byte
// send and receive buffers; the kernel silently caps them at
// net.core.rmem_max / wmem_max.
type bufferedNet struct {
	*stdnet.Net
	size int
}

func newBufferedNet(size int) (*bufferedNet, error) {
	n, err := stdnet.NewNet()
	if err != nil {
		return nil, err
	}
	return &bufferedNet{Net: n, size: size}, nil
}

// ListenUDP implements transport.Net.
func (n *bufferedNet) ListenUDP(network string, laddr *net.UDPAddr) (transport.UDPConn, error) {
	c, err := n.Net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	n.grow(c)
	return c, nil
}

// ListenPacket implements transport.Net.
func (n *bufferedNet) ListenPacket(network, address string) (net.PacketConn, error) {
	c, err := n.Net.ListenPacket(network, address)
	if err != nil {
		return nil, err
	}
	n.grow(c)
	return c, nil
}

// grow sets the socket's buffers, best effort: a refused size leaves the
// kernel's default, which costs throughput, not correctness.
func (n *bufferedNet) grow(c any) {
	if s, ok := c.(interface {
		SetReadBuffer(int) error
		SetWriteBuffer(int) error
	}); ok {
		_ = s.SetReadBuffer(n.size)
		_ = s.SetWriteBuffer(n.size)
	}
}
