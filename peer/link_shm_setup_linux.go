//go:build linux

package peer

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// HostLinks says whether this build can link processes of one host
// without WebRTC (ListenHost, DialHost).
const HostLinks = true

// The set-up of a same-host link. The lower rank listens on an abstract
// unix socket of a random name (ListenHost) and sends the higher rank,
// through the pair's signaling, the name and a random secret (Offer);
// nothing about the socket is guessable, and an abstract name leaves no
// file behind. The higher rank dials it (DialHost) and sends the secret;
// the listener accepts only a peer of its own uid (SO_PEERCRED) that
// knows the secret, and the dialer checks the listener's uid too. The
// listener then makes the rings in a file in /dev/shm, opened with
// O_EXCL and mode 0600 and unlinked at once, and passes its descriptor
// (SCM_RIGHTS) with the ring size; the dialer maps it and answers 'K'.
// Where shared memory cannot be had (no /dev/shm, a mapping refused:
// the listener sends 'U', the dialer answers 'F'), the socket itself
// carries the frames (link_unix.go).
//
//	dialer → listener   secret [32]byte
//	listener → dialer   'M' ring uint32 + SCM_RIGHTS(fd)  |  'U' 0 uint32
//	dialer → listener   'K' (mapped)  |  'F' (use the socket)

// HostConfig tunes a same-host link.
type HostConfig struct {
	// Name says which pair the link joins, in its errors ("shm link to
	// rank 3").
	Name string
	// Ring is the bytes of one direction's ring, a power of two from
	// 64 KiB (0 means DefaultShmRing).
	Ring int
	// Unix asks for the unix-socket link even where shared memory works.
	Unix bool
	// MaxFrame caps the link's frames, header included, below what the
	// ring allows (a quarter of it, at most 1 MiB): the most a WASI
	// host relays to its guest in one frame. 0 means no cap. Both ends
	// must set the same.
	MaxFrame int
}

const (
	hostSecretLen   = 32
	hostHandshake   = 10 * time.Second // bounds one connection's handshake
	hostMinRing     = 64 << 10
	hostMaxRing     = 1 << 30
	hostOfferPrefix = "meshmpi-host1"
)

// HostListener is the lower rank's end of a same-host link's set-up.
type HostListener struct {
	cfg    HostConfig
	ln     *net.UnixListener
	name   string // the abstract socket's name, without its leading NUL
	secret [hostSecretLen]byte
}

// ListenHost opens a listener for one same-host link.
func ListenHost(cfg HostConfig) (*HostListener, error) {
	if cfg.Ring == 0 {
		cfg.Ring = DefaultShmRing
	}
	if cfg.Ring < hostMinRing || cfg.Ring > hostMaxRing || cfg.Ring&(cfg.Ring-1) != 0 {
		return nil, fmt.Errorf("%s: ring of %d bytes: want a power of two in [%d, %d]", cfg.Name, cfg.Ring, hostMinRing, hostMaxRing)
	}
	h := &HostListener{cfg: cfg}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if _, err := rand.Read(h.secret[:]); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	h.name = "meshmpi-" + hex.EncodeToString(id[:])
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + h.name, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("%s: listen: %w", cfg.Name, err)
	}
	h.ln = ln
	return h, nil
}

// Offer is what the dialer needs: the socket's name and the secret. It
// travels through the pair's signaling only.
func (h *HostListener) Offer() string {
	return hostOfferPrefix + " " + h.name + " " + hex.EncodeToString(h.secret[:])
}

// Close stops listening.
func (h *HostListener) Close() error { return h.ln.Close() }

// Accept waits for the dialer, checks it, and makes the link. A
// connection that fails the checks is dropped and Accept waits on, until
// ctx ends.
func (h *HostListener) Accept(ctx context.Context) (Link, error) {
	stop := context.AfterFunc(ctx, func() { _ = h.ln.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				err = context.Cause(ctx)
			}
			return nil, fmt.Errorf("%s: waiting for the peer: %w", h.cfg.Name, err)
		}
		l, err := h.handshake(c)
		if err == nil {
			_ = h.ln.Close()
			return l, nil
		}
		_ = c.Close()
		if !errors.Is(err, errHostPeer) {
			return nil, err
		}
		// someone else knocked: wait for the right peer
	}
}

// errHostPeer is a connection from a process that is not the peer.
var errHostPeer = errors.New("not the peer: another uid, or a wrong secret")

func (h *HostListener) handshake(c *net.UnixConn) (Link, error) {
	_ = c.SetDeadline(time.Now().Add(hostHandshake))
	if err := checkPeerUID(c); err != nil {
		return nil, err
	}
	var got [hostSecretLen]byte
	if _, err := readFull(c, got[:]); err != nil {
		return nil, fmt.Errorf("%w (%v)", errHostPeer, err)
	}
	if subtle.ConstantTimeCompare(got[:], h.secret[:]) != 1 {
		return nil, errHostPeer
	}
	name := h.cfg.Name
	var region []byte
	var f *os.File
	if !h.cfg.Unix {
		var err error
		f, region, err = makeShm(2 * (shmCtrl + h.cfg.Ring))
		if err != nil {
			f, region = nil, nil // the socket carries the frames
		}
	}
	msg := make([]byte, 5)
	binary.LittleEndian.PutUint32(msg[1:], uint32(h.cfg.Ring))
	var oob []byte
	if f != nil {
		msg[0] = 'M'
		oob = syscall.UnixRights(int(f.Fd()))
	} else {
		msg[0] = 'U'
	}
	_, _, err := c.WriteMsgUnix(msg, oob, nil)
	if f != nil {
		_ = f.Close() // the mapping and the peer's descriptor keep the memory
	}
	if err != nil {
		unmap(region)
		return nil, fmt.Errorf("%s: handshake: %w", name, err)
	}
	var ack [1]byte
	if _, err := readFull(c, ack[:]); err != nil {
		unmap(region)
		return nil, fmt.Errorf("%s: handshake: %w", name, err)
	}
	_ = c.SetDeadline(time.Time{})
	if ack[0] == 'K' && region != nil {
		return newShmLink(name, c, region, true, h.cfg.MaxFrame), nil
	}
	unmap(region)
	return newUnixLink(strings.Replace(name, "shm", "unix", 1), c, h.cfg.MaxFrame), nil
}

// DialHost makes the higher rank's end of a same-host link from the
// listener's offer.
func DialHost(ctx context.Context, cfg HostConfig, offer string) (Link, error) {
	fields := strings.Fields(offer)
	if len(fields) != 3 || fields[0] != hostOfferPrefix || !strings.HasPrefix(fields[1], "meshmpi-") || len(fields[1]) > 100 {
		return nil, fmt.Errorf("%s: malformed offer %.80q", cfg.Name, offer)
	}
	secret, err := hex.DecodeString(fields[2])
	if err != nil || len(secret) != hostSecretLen {
		return nil, fmt.Errorf("%s: malformed secret in the offer", cfg.Name)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", "@"+fields[1])
	if err != nil {
		return nil, fmt.Errorf("%s: dial: %w", cfg.Name, err)
	}
	c := nc.(*net.UnixConn)
	l, err := dialHandshake(ctx, cfg, c, secret)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return l, nil
}

func dialHandshake(ctx context.Context, cfg HostConfig, c *net.UnixConn, secret []byte) (Link, error) {
	dl := time.Now().Add(hostHandshake)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	_ = c.SetDeadline(dl)
	if err := checkPeerUID(c); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if _, err := c.Write(secret); err != nil {
		return nil, fmt.Errorf("%s: handshake: %w", cfg.Name, err)
	}
	msg := make([]byte, 5)
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := c.ReadMsgUnix(msg, oob)
	if err != nil || n != 5 {
		return nil, fmt.Errorf("%s: handshake: the peer refused or left (%v)", cfg.Name, err)
	}
	var fd = -1
	if oobn > 0 {
		cms, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err == nil && len(cms) == 1 {
			if fds, err := syscall.ParseUnixRights(&cms[0]); err == nil && len(fds) == 1 {
				fd = fds[0]
			}
		}
	}
	ring := int(binary.LittleEndian.Uint32(msg[1:]))
	var region []byte
	if msg[0] == 'M' && fd >= 0 && !cfg.Unix && ring >= hostMinRing && ring <= hostMaxRing && ring&(ring-1) == 0 {
		region, err = syscall.Mmap(fd, 0, 2*(shmCtrl+ring), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		if err != nil {
			region = nil
		}
	}
	if fd >= 0 {
		_ = syscall.Close(fd)
	}
	ack := []byte{'F'}
	if region != nil {
		ack[0] = 'K'
	}
	if _, err := c.Write(ack); err != nil {
		unmap(region)
		return nil, fmt.Errorf("%s: handshake: %w", cfg.Name, err)
	}
	_ = c.SetDeadline(time.Time{})
	if region != nil {
		return newShmLink(cfg.Name, c, region, false, cfg.MaxFrame), nil
	}
	return newUnixLink(strings.Replace(cfg.Name, "shm", "unix", 1), c, cfg.MaxFrame), nil
}

// checkPeerUID refuses a peer that runs as another user.
func checkPeerUID(c *net.UnixConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("%w: uid %d", errHostPeer, cred.Uid)
	}
	return nil
}

// makeShm makes an unlinked file of size bytes in /dev/shm, readable by
// this user only, and maps it.
func makeShm(size int) (*os.File, []byte, error) {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, nil, err
	}
	path := "/dev/shm/meshmpi-" + hex.EncodeToString(id[:])
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, err
	}
	_ = os.Remove(path) // nobody opens it by name: its descriptor goes to the peer
	if err := f.Truncate(int64(size)); err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	region, err := mapShm(f, size)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, region, nil
}

func unmap(region []byte) {
	if region != nil {
		_ = syscall.Munmap(region)
	}
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
