package turn

import (
	"net"
	"strings"
	"testing"
	"time"

	pionturn "github.com/pion/turn/v5"
	"github.com/stretchr/testify/require"
)

var testSecret = []byte("0123456789abcdef-turn")

func listen(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Secret == nil {
		cfg.Secret = testSecret
	}
	s, err := Listen(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// client is a TURN client of s over UDP with the given credentials.
func client(t *testing.T, s *Server, user, pass string) *pionturn.Client {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	c, err := pionturn.NewClient(&pionturn.ClientConfig{
		STUNServerAddr: s.Addr().String(), TURNServerAddr: s.Addr().String(),
		Conn: conn, Username: user, Password: pass, Realm: DefaultRealm,
		LoggerFactory: slogFactory{s.cfg.Logger},
	})
	require.NoError(t, err)
	require.NoError(t, c.Listen())
	t.Cleanup(c.Close)
	return c
}

func TestCredentials(t *testing.T) {
	exp := time.Unix(1900000000, 0)
	u, p := Credentials(testSecret, "job-1.a_b", 7, exp)
	require.Equal(t, "1900000000:job-1.a_b:7", u)
	// the TURN REST scheme: base64(HMAC-SHA1(secret, username)), which
	// pion's (and coturn's) own implementation computes alike
	_, want, err := pionturn.GenerateLongTermTURNRESTCredentials(string(testSecret), "x", time.Hour)
	require.NoError(t, err)
	require.Len(t, p, len(want))
	require.Equal(t, password(testSecret, u), p)

	for _, tc := range []struct {
		in string
		ok bool
	}{
		{u, true},
		{"1900000000:job:0", true},
		{"1900000000", false},        // pion's plain time-windowed form: no job, no rank
		{"1900000000:job", false},    // no rank
		{"1900000000::3", false},     // empty job
		{"x:job:3", false},           // expiry not a number
		{"1900000000:job:-1", false}, // negative rank
		{"1900000000:job:three", false},
		{":job:3", false},
	} {
		_, _, _, ok := parseUsername(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
	}
}

// STUN answers anyone; a TURN allocation needs credentials minted with the
// server's secret and not expired, and relays data both ways, counted.
func TestAllocateAndRelay(t *testing.T) {
	s := listen(t, Config{})
	require.Len(t, s.URLs(), 3)
	require.True(t, strings.HasPrefix(s.URLs()[0], "stun:127.0.0.1:"))

	anon := client(t, s, "", "")
	mapped, err := anon.SendBindingRequest()
	require.NoError(t, err, "STUN binding without credentials")
	require.Equal(t, "127.0.0.1", mapped.(*net.UDPAddr).IP.String())

	user, pass := s.Credentials("job", 1, time.Now().Add(time.Hour))
	c := client(t, s, user, pass)
	relay, err := c.Allocate()
	require.NoError(t, err)
	defer relay.Close()
	require.Equal(t, 1, s.Stats().Allocations)

	peer, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer peer.Close()
	msg := []byte("through the relay")
	_, err = relay.WriteTo(msg, peer.LocalAddr()) // creates the permission
	require.NoError(t, err)
	buf := make([]byte, 64)
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, from, err := peer.ReadFrom(buf)
	require.NoError(t, err)
	require.Equal(t, msg, buf[:n])
	require.Equal(t, relay.LocalAddr().String(), from.String(), "the peer sees the relay address")
	_, err = peer.WriteTo([]byte("back"), from)
	require.NoError(t, err)
	require.NoError(t, relay.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, _, err = relay.ReadFrom(buf)
	require.NoError(t, err)
	require.Equal(t, "back", string(buf[:n]))
	require.Equal(t, uint64(len(msg)+4), s.Stats().Relayed)
}

func TestCredentialsRefused(t *testing.T) {
	s := listen(t, Config{})
	future := time.Now().Add(time.Hour)
	good, _ := s.Credentials("job", 0, future)
	other, _ := Credentials([]byte("another-secret-of-16+"), "job", 0, future)
	expired, expiredPass := s.Credentials("job", 0, time.Now().Add(-time.Second))
	for _, tc := range []struct{ name, user, pass string }{
		{"wrong password", good, "bm90IHRoZSBwYXNzd29yZA=="},
		{"another secret", other, password([]byte("another-secret-of-16+"), other)},
		{"expired", expired, expiredPass},
		{"not ours", "alice", "secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Stats().AuthFailed
			_, err := client(t, s, tc.user, tc.pass).Allocate()
			require.Error(t, err)
			require.Greater(t, s.Stats().AuthFailed, before)
		})
	}
	require.Zero(t, s.Stats().Allocations)
}

// A rank cannot hold more than its quota of allocations, nor a job more
// than its own, and an allocation's end gives its place back.
func TestQuotas(t *testing.T) {
	s := listen(t, Config{RankQuota: 2, JobQuota: 3})
	exp := time.Now().Add(time.Hour)
	alloc := func(job string, rank int) (net.PacketConn, error) {
		u, p := s.Credentials(job, rank, exp)
		return client(t, s, u, p).Allocate()
	}
	a1, err := alloc("a", 0)
	require.NoError(t, err)
	_, err = alloc("a", 0)
	require.NoError(t, err)
	_, err = alloc("a", 0)
	require.Error(t, err, "rank quota")
	_, err = alloc("a", 1)
	require.NoError(t, err)
	_, err = alloc("a", 2)
	require.Error(t, err, "job quota")
	_, err = alloc("b", 0)
	require.NoError(t, err, "another job has its own quota")
	require.Equal(t, uint64(2), s.Stats().Refused)

	require.NoError(t, a1.Close()) // deallocates (a Refresh with lifetime 0)
	require.Eventually(t, func() bool { _, err := alloc("a", 2); return err == nil }, 10*time.Second, 50*time.Millisecond)
}

// The relay port range bounds allocations.
func TestPortRange(t *testing.T) {
	s := listen(t, Config{MinPort: 40111, MaxPort: 40111})
	u, p := s.Credentials("job", 0, time.Now().Add(time.Hour))
	relay, err := client(t, s, u, p).Allocate()
	require.NoError(t, err)
	require.Equal(t, 40111, relay.LocalAddr().(*net.UDPAddr).Port)
	u, p = s.Credentials("job", 1, time.Now().Add(time.Hour))
	_, err = client(t, s, u, p).Allocate()
	require.Error(t, err, "one port, one allocation")
}

func TestListenErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"short secret", Config{Listen: "127.0.0.1:0", Secret: []byte("short")}},
		{"unspecified address without public IP", Config{Listen: "0.0.0.0:0", Secret: testSecret}},
		{"bad ports", Config{Listen: "127.0.0.1:0", Secret: testSecret, MinPort: 5000, MaxPort: 4000}},
		{"bad address", Config{Listen: "nowhere", Secret: testSecret}},
		{"negative quota", Config{Listen: "127.0.0.1:0", Secret: testSecret, JobQuota: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Listen(tc.cfg)
			require.Error(t, err)
		})
	}
}

// checkingConn is a relay socket whose WriteTo looks at the server's
// count as it writes, and writes only short of what it is given.
type checkingConn struct {
	net.PacketConn
	s        *Server
	atWrite  uint64
	accepted int
}

func (c *checkingConn) WriteTo(p []byte, _ net.Addr) (int, error) {
	c.atWrite = c.s.Stats().Relayed
	return min(len(p), c.accepted), nil
}

// A relayed write is counted before it leaves, so a peer that received
// it finds it counted; what a short write did not send is taken back.
func TestRelayedCountedBeforeWrite(t *testing.T) {
	s := listen(t, Config{})
	w := &checkingConn{s: s, accepted: 5}
	c := &countedConn{PacketConn: w, s: s}
	n, err := c.WriteTo([]byte("through the relay"), nil)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	require.Equal(t, uint64(17), w.atWrite, "counted before the write")
	require.Equal(t, uint64(5), s.Stats().Relayed, "the unsent bytes taken back")
}
