//go:build !js && !wasip1

package peer

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pion/datachannel"
	"github.com/pion/dtls/v3"
	"github.com/pion/ice/v4"
	"github.com/pion/logging"
	"github.com/pion/sctp"
	"github.com/pion/stun/v4"
	"github.com/pion/webrtc/v4"
)

// The native data path: when both ends of a link are native Go (native
// ranks, WASI hosts), the link is composed from pion's ice, dtls, sctp and
// datachannel packages directly, so that SCTP sends large packets. pion's
// PeerConnection fixes its outbound SCTP packet at 1,191 bytes, and at that
// size the cost is per packet (syscalls, allocation, GC), not per byte
// (reference/webrtc.md: 58–61 MB/s at 1,191, 191 MB/s at 8,192 in one
// process).
//
// The two ends agree on it through their ordinary offer/answer: the offer
// carries an SDP attribute no browser sends (nativeMTUAttr, the largest
// SCTP packet the offerer receives); an answerer that is native too answers
// with its own, and each side sends packets of at most the smaller. The
// descriptions are otherwise standard (ICE credentials, one DTLS
// fingerprint, one data-channel section), so the identity check reads them
// as it reads pion's.

const (
	// nativeMTUAttr is the SDP attribute of the native data path.
	nativeMTUAttr = "x-meshmpi-sctp-mtu"
	// nativeMTU is the largest SCTP packet this side receives: ice, dtls
	// and sctp read datagrams into 8 KiB buffers, and a DTLS record adds
	// 13 bytes of header, 8 of explicit nonce and 16 of AES-GCM tag
	// (8,192 − 37 = 8,155; a little kept spare).
	nativeMTU = 8150
	// standardMTU is pion's outbound SCTP packet size, used towards a
	// remote that did not advertise nativeMTUAttr.
	standardMTU = 1191
	// nativeReceiveBuffer is the SCTP receive window: 4 MiB added 15–20%
	// at large packet sizes (reference/webrtc.md).
	nativeReceiveBuffer = 4 << 20
	// sctpPort is the data channel's SCTP port in the descriptions.
	sctpPort = 5000
)

// nativeOffer reports whether an offer asks for the native data path.
func nativeOffer(sdp []byte) bool {
	_, ok := sdpAttr(string(sdp), nativeMTUAttr)
	return ok
}

// sdpAttr returns the value of the first a=name: line of sdp.
func sdpAttr(sdp, name string) (string, bool) {
	for line := range strings.SplitSeq(sdp, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "a="+name+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// nativePeer is the native data path under a webrtcLink: an ICE agent,
// and once ICE connects, DTLS, an SCTP association and one negotiated
// data channel on it. It implements rtcPeer's description and candidate
// methods; the link adds failed, failure and lose.
type nativePeer struct {
	l       *webrtcLink
	cfg     WebRTCConfig
	offerer bool
	agent   *ice.Agent
	cert    tls.Certificate
	localFP string // "sha-256 AB:…"
	log     logging.LoggerFactory

	mu      sync.Mutex
	rUfrag  string // the remote's ICE credentials
	rPwd    string
	rFP     string // the remote's certificate, from its description
	rMTU    int    // the remote's nativeMTUAttr, 0 if it sent none
	rMax    int    // the remote's max-message-size, 0 if it sent none
	rSetup  string // the remote's a=setup
	started bool   // run began
	closed  bool
	running sync.WaitGroup // run; close waits for it

	// set by run before the link opens, read after
	dtls     *dtls.Conn
	assoc    *sctp.Association
	dc       *datachannel.DataChannel
	mtu      int // the outbound SCTP packet size agreed
	maxFrame int // the largest message this side sends (linkFrame)
}

// nativeAgent builds the ICE agent with the same choices the pion API
// makes (WebRTCConfig.API): timing, network filters, socket buffers.
func nativeAgent(cfg WebRTCConfig, lf logging.LoggerFactory) (*ice.Agent, error) {
	var urls []*stun.URI
	for _, s := range cfg.ICEServers {
		for _, u := range s.URLs {
			uri, err := stun.ParseURI(u)
			if err != nil {
				return nil, fmt.Errorf("ICE server %q: %w", u, err)
			}
			if uri.Scheme == stun.SchemeTypeTURN || uri.Scheme == stun.SchemeTypeTURNS {
				uri.Username, uri.Password = s.Username, s.Credential
			}
			urls = append(urls, uri)
		}
	}
	opts := []ice.AgentOption{
		ice.WithUrls(urls),
		ice.WithLoggerFactory(lf),
		ice.WithDisconnectedTimeout(iceDisconnectedTimeout),
		ice.WithFailedTimeout(iceFailedTimeout),
		ice.WithKeepaliveInterval(iceKeepalive),
	}
	if cfg.Loopback {
		opts = append(opts,
			ice.WithIncludeLoopback(),
			ice.WithInterfaceFilter(isLoopbackInterface),
			ice.WithIPFilter(func(ip net.IP) bool { return ip.IsLoopback() }),
			ice.WithNetworkTypes([]ice.NetworkType{ice.NetworkTypeUDP4}),
			ice.WithMulticastDNSMode(ice.MulticastDNSModeDisabled))
	} else {
		opts = append(opts,
			ice.WithNetworkTypes([]ice.NetworkType{ice.NetworkTypeUDP4, ice.NetworkTypeUDP6}),
			ice.WithMulticastDNSMode(ice.MulticastDNSModeQueryOnly))
	}
	if cfg.SocketBuffer > 0 {
		n, err := newBufferedNet(cfg.SocketBuffer)
		if err != nil {
			return nil, fmt.Errorf("peer: webrtc network: %w", err)
		}
		opts = append(opts, ice.WithNet(n))
	}
	return ice.NewAgentWithOptions(opts...)
}

// connectNative builds a link on the native data path and negotiates it
// through setup (which, on the answerer, holds the offer already).
func connectNative(ctx context.Context, cfg WebRTCConfig, sig Signaler, offerer bool, setup *rtcSetup) (_ Link, err error) {
	l := newWebRTCLink(cfg, setup)
	defer func() {
		if err != nil {
			l.teardown()
		}
	}()
	id := cfg.Identity
	if id == nil {
		if id, err = NewIdentity(); err != nil {
			return nil, err
		}
	}
	cert, err := id.tlsCertificate()
	if err != nil {
		return nil, err
	}
	lf := logging.NewDefaultLoggerFactory()
	agent, err := nativeAgent(cfg, lf)
	if err != nil {
		return nil, fmt.Errorf("ICE agent: %w", err)
	}
	n := &nativePeer{l: l, cfg: cfg, offerer: offerer, agent: agent, cert: cert, localFP: id.Fingerprint(), log: lf}
	l.nat = n
	if err := agent.OnCandidate(func(c ice.Candidate) {
		if c == nil {
			return
		}
		b, err := json.Marshal(webrtc.ICECandidateInit{Candidate: "candidate:" + c.Marshal(), SDPMid: new("0"), SDPMLineIndex: new(uint16(0))})
		if err != nil {
			l.lose(fmt.Errorf("local candidate: %w", err))
			return
		}
		setup.localCandidate(b)
	}); err != nil {
		return nil, err
	}
	if err := agent.OnConnectionStateChange(func(s ice.ConnectionState) {
		// keep reads webrtc's names, which are ice's in lower case
		setup.iceState(strings.ToLower(s.String()))
		if s == ice.ConnectionStateFailed || s == ice.ConnectionStateClosed {
			l.lose(fmt.Errorf("ICE %s", strings.ToLower(s.String())))
		}
	}); err != nil {
		return nil, err
	}
	if err := setup.negotiate(ctx, sig, offerer, l, cfg.RemoteFingerprint); err != nil {
		return nil, err
	}
	link, err := l.opened(n.dc)
	if err != nil {
		return nil, err
	}
	setup.keep(sig, offerer, l, cfg.RemoteFingerprint)
	return link, nil
}

// createLocal implements rtcPeer's createLocal for the native path: the
// description is written here, with the agent's credentials and this
// side's certificate.
func (n *nativePeer) createLocal(typ string) (string, error) {
	if typ == "restart" {
		// fresh credentials and candidates; the ICE connection, DTLS and
		// SCTP carry on over the new pair
		if err := n.agent.Restart("", ""); err != nil {
			return "", err
		}
	}
	ufrag, pwd, err := n.agent.GetLocalUserCredentials()
	if err != nil {
		return "", err
	}
	setup := "actpass"
	if typ == "answer" {
		setup = "active" // the answerer is the DTLS client, as pion's answers make it
	}
	var b strings.Builder
	sess, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	fmt.Fprintf(&b, "v=0\r\no=- %d 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n", sess)
	b.WriteString("m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\n")
	fmt.Fprintf(&b, "a=ice-ufrag:%s\r\na=ice-pwd:%s\r\na=ice-options:trickle\r\n", ufrag, pwd)
	fmt.Fprintf(&b, "a=fingerprint:%s\r\na=setup:%s\r\na=mid:0\r\n", n.localFP, setup)
	fmt.Fprintf(&b, "a=sctp-port:%d\r\na=max-message-size:%d\r\na=%s:%d\r\n", sctpPort, n.cfg.MaxFrame, nativeMTUAttr, nativeMTU)
	if typ != "answer" {
		// the answerer gathers in setRemote, once it knows the remote
		if err := n.agent.GatherCandidates(); err != nil {
			return "", fmt.Errorf("gather: %w", err)
		}
	}
	return b.String(), nil
}

// setRemote implements rtcPeer's setRemote: it reads the remote's ICE
// credentials, certificate and packet size, and starts the connection the
// first time; later descriptions (ICE restarts) hand ICE the new
// credentials.
func (n *nativePeer) setRemote(typ, sdp string) error {
	ufrag, ok1 := sdpAttr(sdp, "ice-ufrag")
	pwd, ok2 := sdpAttr(sdp, "ice-pwd")
	fp, ok3 := sdpAttr(sdp, "fingerprint")
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("%s has no ICE credentials or no fingerprint", typ)
	}
	mtu := 0
	if v, ok := sdpAttr(sdp, nativeMTUAttr); ok {
		m, err := strconv.Atoi(v)
		if err != nil || m < 576 {
			return fmt.Errorf("%s: bad %s %q", typ, nativeMTUAttr, v)
		}
		mtu = m
	}
	maxMsg := 0
	if v, ok := sdpAttr(sdp, "max-message-size"); ok {
		m, err := strconv.Atoi(v)
		if err != nil || m < 0 {
			return fmt.Errorf("%s: bad max-message-size %q", typ, v)
		}
		if maxMsg = m; m == 0 {
			maxMsg = math.MaxInt32 // RFC 8841 §6: 0 means no limit
		}
	}
	setup, _ := sdpAttr(sdp, "setup")
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return ErrClosed
	}
	first := !n.started
	changed := ufrag != n.rUfrag || pwd != n.rPwd
	if first {
		n.rUfrag, n.rPwd, n.rFP, n.rMTU, n.rMax, n.rSetup, n.started = ufrag, pwd, normalizeFingerprint(fp), mtu, maxMsg, setup, true
	} else {
		n.rUfrag, n.rPwd = ufrag, pwd
	}
	n.mu.Unlock()
	if first {
		if typ == "offer" {
			if err := n.agent.GatherCandidates(); err != nil {
				return fmt.Errorf("gather: %w", err)
			}
		}
		n.running.Add(1)
		go n.run()
		return nil
	}
	if !changed {
		return nil
	}
	if typ == "offer" {
		// the remote restarted ICE: this side takes fresh credentials too
		if err := n.agent.Restart("", ""); err != nil {
			return err
		}
		if err := n.agent.SetRemoteCredentials(ufrag, pwd); err != nil {
			return err
		}
		return n.agent.GatherCandidates()
	}
	return n.agent.SetRemoteCredentials(ufrag, pwd)
}

// addCandidate implements rtcPeer's addCandidate.
func (n *nativePeer) addCandidate(init []byte) error {
	var ci webrtc.ICECandidateInit
	if err := json.Unmarshal(init, &ci); err != nil {
		return err
	}
	if ci.Candidate == "" {
		return nil // end of candidates
	}
	c, err := ice.UnmarshalCandidate(ci.Candidate)
	if err != nil {
		return err
	}
	return n.agent.AddRemoteCandidate(c)
}

// run connects ICE, DTLS, SCTP and the data channel, then reports the
// link open; the first failure loses the link. The set-up bounds it: the
// link's teardown closes the agent, which ends every step.
func (n *nativePeer) run() {
	defer n.running.Done()
	ctx, cancel := context.WithTimeout(n.l.setup.life, DefaultSetupTimeout)
	defer cancel()
	if err := n.connect(ctx); err != nil {
		n.l.lose(err)
		return
	}
	n.l.setup.open()
}

func (n *nativePeer) connect(ctx context.Context) error {
	n.mu.Lock()
	ufrag, pwd, rFP, rMTU, rMax, rSetup := n.rUfrag, n.rPwd, n.rFP, n.rMTU, n.rMax, n.rSetup
	n.mu.Unlock()
	maxFrame, err := linkFrame(rMax)
	if err != nil {
		return err
	}
	var conn *ice.Conn
	if n.offerer {
		conn, err = n.agent.Dial(ctx, ufrag, pwd)
	} else {
		conn, err = n.agent.Accept(ctx, ufrag, pwd)
	}
	if err != nil {
		return fmt.Errorf("ICE: %w", err)
	}
	dcfg := &dtls.Config{
		Certificates:         []tls.Certificate{n.cert},
		ExtendedMasterSecret: dtls.RequireExtendedMasterSecret,
		InsecureSkipVerify:   true, // self-signed: the fingerprint check below is the verification
		LoggerFactory:        n.log,
		// pion and browsers ask for SRTP keys even with no media: the
		// profiles pion offers, so that a standard peer's handshake passes
		SRTPProtectionProfiles: []dtls.SRTPProtectionProfile{
			dtls.SRTP_AEAD_AES_256_GCM, dtls.SRTP_AEAD_AES_128_GCM, dtls.SRTP_AES128_CM_HMAC_SHA1_80,
		},
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyFingerprint(raw, rFP)
		},
	}
	pc := icePacketConn{conn}
	// the answerer is the client unless its answer said passive; the
	// offerer the server unless the answer said so (RFC 8842)
	client := !n.offerer
	if n.offerer && rSetup == "passive" {
		client = true
	}
	var dc *dtls.Conn
	if client {
		dcfg.ClientAuth = dtls.NoClientCert
		dc, err = dtls.Client(pc, conn.RemoteAddr(), dcfg)
	} else {
		dcfg.ClientAuth = dtls.RequireAnyClientCert
		dc, err = dtls.Server(pc, conn.RemoteAddr(), dcfg)
	}
	if err != nil {
		return fmt.Errorf("DTLS: %w", err)
	}
	if !n.hold(func() { n.dtls = dc }) {
		_ = dc.Close()
		return ErrClosed
	}
	if err := dc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("DTLS handshake: %w", err)
	}
	mtu := standardMTU
	if rMTU > 0 {
		mtu = min(rMTU, nativeMTU)
	}
	n.mtu, n.maxFrame = mtu, maxFrame
	assoc, err := sctp.ClientWithOptions(
		sctp.WithNetConn(dc),
		sctp.WithLoggerFactory(n.log),
		sctp.WithMTU(uint32(mtu)),
		// the association refuses to send larger; what this side
		// receives is what its description advertised (cfg.MaxFrame)
		sctp.WithMaxMessageSize(uint32(maxFrame)),
		sctp.WithMaxReceiveBufferSize(nativeReceiveBuffer),
		// DTLS authenticates every packet, so SCTP's CRC32c adds nothing
		// (RFC 9653); used only where the remote offers it too
		sctp.WithEnableZeroChecksum(true),
	)
	if err != nil {
		return fmt.Errorf("SCTP: %w", err)
	}
	if !n.hold(func() { n.assoc = assoc }) {
		assoc.Abort("")
		return ErrClosed
	}
	ch, err := datachannel.Dial(assoc, 0, &datachannel.Config{
		ChannelType: datachannel.ChannelTypeReliable, Negotiated: true, Label: "meshmpi", LoggerFactory: n.log,
	})
	if err != nil {
		return fmt.Errorf("data channel: %w", err)
	}
	if !n.hold(func() { n.dc = ch }) {
		_ = ch.Close()
		return ErrClosed
	}
	return nil
}

// hold records a connection that close must end, unless close came
// first (false: the caller closes it).
func (n *nativePeer) hold(set func()) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	set()
	return true
}

// close ends the path from the data channel down; pion's goroutines end
// with their connections.
func (n *nativePeer) close() {
	n.mu.Lock()
	n.closed = true
	d, a, ch := n.dtls, n.assoc, n.dc
	n.mu.Unlock()
	if ch != nil {
		_ = ch.Close()
	}
	if a != nil {
		// an abort tells the remote at once, as pion's closed peer
		// connection does
		a.Abort("")
	}
	if d != nil {
		_ = d.Close()
	}
	_ = n.agent.Close()
	n.running.Wait()
}

// path is the selected candidate pair and its round trip.
func (n *nativePeer) path(p *Path) bool {
	pair, err := n.agent.GetSelectedCandidatePair()
	if err != nil || pair == nil {
		return false
	}
	p.Local, p.Remote = pair.Local.Type().String(), pair.Remote.Type().String()
	p.LocalAddr = net.JoinHostPort(pair.Local.Address(), strconv.Itoa(pair.Local.Port()))
	p.RemoteAddr = net.JoinHostPort(pair.Remote.Address(), strconv.Itoa(pair.Remote.Port()))
	if st, ok := n.agent.GetSelectedCandidatePairStats(); ok {
		p.RTT = time.Duration(st.CurrentRoundTripTime * float64(time.Second))
	}
	return true
}

// verifyFingerprint checks the remote's DTLS certificate against the
// fingerprint its description named (which negotiate checked against the
// vouched one): DTLS proves the remote holds the key of the certificate
// it sent, this binds that certificate to the description.
func verifyFingerprint(raw [][]byte, want string) error {
	if len(raw) == 0 {
		return fmt.Errorf("the remote sent no certificate: %w", ErrIdentity)
	}
	sum := sha256.Sum256(raw[0])
	got := "sha-256 " + strings.ToUpper(colonHex(sum[:]))
	if got != want {
		return fmt.Errorf("the remote's DTLS certificate is %s; its description named %s: %w", got, want, ErrIdentity)
	}
	return nil
}

func colonHex(b []byte) string {
	h := hex.EncodeToString(b)
	var s strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			s.WriteByte(':')
		}
		s.WriteString(h[i : i+2])
	}
	return s.String()
}

// icePacketConn is the ICE connection as the packet conn DTLS reads: one
// remote, so the addresses are the connection's.
type icePacketConn struct{ *ice.Conn }

func (c icePacketConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, err := c.Read(p)
	return n, c.RemoteAddr(), err
}

// WriteTo drops the packet while ICE has no pair (between an ICE restart
// and its first new pair): SCTP sends it again, as over pion's own
// connection, where a write error would end the association.
func (c icePacketConn) WriteTo(p []byte, _ net.Addr) (int, error) {
	n, err := c.Write(p)
	if errors.Is(err, ice.ErrNoCandidatePairs) {
		return 0, nil
	}
	if errors.Is(err, ice.ErrClosed) {
		return 0, io.ErrClosedPipe
	}
	return n, err
}
