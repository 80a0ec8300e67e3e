package peer

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// WebRTC link defaults, shared by the native (pion) link and the browser
// (RTCPeerConnection) link.
const (
	// DefaultHighWater is the buffered amount, in bytes, at or above which
	// WriteFrame reports the link not ready. A browser's send() throws
	// once about 16 MiB is queued, so the mark stays far below that.
	DefaultHighWater = 1 << 20
	// DefaultLowWater is the buffered amount at or below which the link
	// calls HandleWritable again.
	DefaultLowWater = 256 << 10
	// DefaultSocketBuffer is the UDP send and receive buffer size asked of
	// the kernel (which caps it at its rmem_max/wmem_max). Native only.
	DefaultSocketBuffer = 4 << 20
	// DefaultGCFloor is the heap a process with a native WebRTC link
	// keeps out of its collector's way (WebRTCConfig.GCFloor): pion's
	// per-packet garbage then does not make it collect every few MiB.
	// Native only.
	DefaultGCFloor = 16 << 20
	// DefaultSetupTimeout bounds DialWebRTC and AcceptWebRTC when the
	// context has no earlier deadline: a peer that cannot be reached is
	// reported lost within the 10 s a job allows (set-up takes about 4 ms
	// between native ranks, at most a few hundred with a browser).
	DefaultSetupTimeout = 10 * time.Second
	// MaxWebRTCFrame is the largest frame a WebRTC link sends or accepts,
	// header included, and the max-message-size a native rank advertises
	// on the native data path: Chromium's own (262,144), so that two
	// browsers, or two native ranks, move a 64 KiB message eagerly in one
	// frame and a 1 MiB one in 5 frames rather than 17 (pion's path, a
	// browser's link to a native rank, keeps StandardWebRTCFrame:
	// pionFrame in link_webrtc.go says why). A link sends
	// frames of at most min(the remote's max-message-size, this): a peer
	// that advertises less gets frames of its size, one that advertises
	// none StandardWebRTCFrame. The water marks hold 4 such frames
	// (HighWater) and refill with one still queued (LowWater); the SCTP
	// receive windows on our side hold several (native path 4 MiB,
	// pion's default 1 MiB), which a message must fit whole to be
	// reassembled.
	MaxWebRTCFrame = 256 << 10
	// StandardWebRTCFrame is the largest message a peer that advertises
	// no max-message-size accepts (pion's value; RFC 8841 §6 says 64K).
	StandardWebRTCFrame = 65535
)

// linkFrame is the frame limit of a link whose remote advertised a
// max-message-size of remote (0: none advertised): the smaller of it and
// MaxWebRTCFrame. A remote that advertises a size too small for a frame
// header gets an error, not a link that cannot carry a byte.
func linkFrame(remote int) (int, error) {
	switch {
	case remote == 0:
		return StandardWebRTCFrame, nil
	case remote <= HeaderLen:
		return 0, fmt.Errorf("the remote's max-message-size is %d bytes, no more than a frame header", remote)
	}
	return min(remote, MaxWebRTCFrame), nil
}

// WebRTCConfig configures a WebRTC link. The zero value is LAN mode with no
// ICE servers and the default water marks and socket buffers. In the
// browser (GOOS=js) the page's network stack picks interfaces and sockets
// itself, so Loopback and SocketBuffer have no effect there.
type WebRTCConfig struct {
	ICEServers []ICEServer
	// Loopback keeps the connection on this host: loopback interface and
	// addresses only, IPv4 UDP, no mDNS. Otherwise (LAN mode) every
	// interface is used and mDNS is query-only, so browsers' .local host
	// candidates resolve.
	Loopback bool
	// HighWater and LowWater are the flow-control marks on the data
	// channel's buffered amount, in bytes; 0 means the default. LowWater
	// must be below HighWater.
	HighWater, LowWater int
	// SocketBuffer is the UDP socket buffer size in bytes; 0 means
	// DefaultSocketBuffer, a negative value keeps the kernel's default.
	SocketBuffer int
	// Identity is this rank's certificate; nil: a fresh one per link.
	Identity *Identity
	// RemoteFingerprint, if set, is the certificate fingerprint the
	// signaling server vouched for the remote rank: a remote description
	// that names another certificate fails the link with ErrIdentity.
	RemoteFingerprint string
	// NativeRemote says the remote rank is native Go (a native rank or a
	// WASI host), not a browser. The dialer then offers the native data
	// path (larger SCTP packets: several times the throughput), which a
	// native acceptor takes and a browser would not see; false keeps
	// pion's standard path. The acceptor ignores it: the offer decides.
	// No effect in the browser.
	NativeRemote bool
	// MaxFrame is the largest frame this side accepts, header included,
	// advertised as its max-message-size; 0, or more than
	// MaxWebRTCFrame, means MaxWebRTCFrame. A WASI host sets its guest's
	// limit, which the frames it relays must fit. No effect in the
	// browser, whose descriptions advertise the browser's own.
	MaxFrame int
	// GCFloor is the heap, in bytes, that the collector of a process
	// with a native WebRTC link leaves alone (gcfloor.go says why and
	// how): the process keeps the largest asked of it for good. 0 means
	// the environment's EnvGCFloor, or DefaultGCFloor where it is unset;
	// negative, none. No effect in the browser or a WASI guest, whose
	// links are not pion's.
	GCFloor int
}

// EnvGCFloor sets the GC floor of a process's native WebRTC links where
// WebRTCConfig.GCFloor is 0: bytes, with an optional KiB, MiB or GiB
// suffix; 0 turns it off.
const EnvGCFloor = "MESHMPI_GC_FLOOR"

// envGCFloor reads EnvGCFloor: DefaultGCFloor where it is unset, -1
// where it is 0.
func envGCFloor() (int, error) {
	v := strings.TrimSpace(os.Getenv(EnvGCFloor))
	if v == "" {
		return DefaultGCFloor, nil
	}
	n, err := parseBytes(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", EnvGCFloor, v, err)
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}

// parseBytes reads a byte count with an optional KiB, MiB or GiB suffix.
func parseBytes(s string) (int, error) {
	num, unit := s, 1
	for _, u := range []struct {
		suffix string
		n      int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			num, unit = strings.TrimSpace(v), u.n
			break
		}
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > math.MaxInt/unit {
		return 0, errors.New("want a byte count, with an optional KiB, MiB or GiB suffix")
	}
	return n * unit, nil
}

func (c WebRTCConfig) withDefaults() WebRTCConfig {
	if c.HighWater == 0 {
		c.HighWater = DefaultHighWater
	}
	if c.LowWater == 0 {
		c.LowWater = min(DefaultLowWater, c.HighWater/2)
	}
	if c.SocketBuffer == 0 {
		c.SocketBuffer = DefaultSocketBuffer
	}
	if c.MaxFrame == 0 || c.MaxFrame > MaxWebRTCFrame {
		c.MaxFrame = MaxWebRTCFrame
	}
	if c.GCFloor == 0 {
		c.GCFloor, _ = envGCFloor() // Validate reports a bad value
	}
	return c
}

// Validate reports whether c can be used (after defaults are applied).
func (c WebRTCConfig) Validate() error {
	c = c.withDefaults()
	if c.HighWater < 0 || c.LowWater < 0 || c.LowWater >= c.HighWater {
		return fmt.Errorf("peer: webrtc water marks low %d, high %d: want 0 ≤ low < high", c.LowWater, c.HighWater)
	}
	if _, err := envGCFloor(); c.GCFloor == 0 && err != nil {
		return err
	}
	if c.MaxFrame <= HeaderLen {
		return fmt.Errorf("peer: webrtc MaxFrame %d: want 0 or more than a %d-byte header", c.MaxFrame, HeaderLen)
	}
	if c.RemoteFingerprint != "" && !ValidFingerprint(c.RemoteFingerprint) {
		return fmt.Errorf("peer: remote fingerprint %q: want \"sha-256 AB:CD:…\"", c.RemoteFingerprint)
	}
	for i, s := range c.ICEServers {
		if len(s.URLs) == 0 {
			return fmt.Errorf("peer: ICE server %d has no URL", i)
		}
		for _, u := range s.URLs {
			scheme, _, _ := strings.Cut(u, ":")
			switch scheme {
			case "stun", "stuns":
			case "turn", "turns":
				if s.Username == "" || s.Credential == "" {
					return fmt.Errorf("peer: TURN server %q needs a username and a credential", u)
				}
			default:
				return fmt.Errorf("peer: ICE server URL %q: want stun:, stuns:, turn: or turns:", u)
			}
		}
	}
	return nil
}
