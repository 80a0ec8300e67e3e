//go:build !js

package signaling_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/signaling/natsbus"
	"github.com/stretchr/testify/require"
)

var clusterSecret = []byte("cluster-test-secret-of-enough-bytes")

// node is one signaling server of a test cluster.
type node struct {
	srv   *signaling.Server
	bus   *natsbus.Bus
	hs    *httptest.Server
	conns *connSet
	url   string
	dead  bool
}

// kill stops n as SIGKILL would, seen from the others: its beats stop
// without a goodbye, its websockets drop without a close handshake.
func (n *node) kill() {
	n.dead = true
	_ = n.bus.Close()
	n.hs.Listener.Close()
	n.conns.closeAll()
}

// connSet tracks a listener's connections, hijacked ones too.
type connSet struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *connSet) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *connSet) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.Close()
	}
}

// startCluster runs an embedded NATS and size signaling servers on it.
func startCluster(t *testing.T, size int) []*node {
	t.Helper()
	nats, err := natsbus.StartEmbedded(natsbus.EmbeddedOptions{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(nats.Shutdown)
	nodes := make([]*node, size)
	for i := range nodes {
		bus, err := natsbus.New(context.Background(), natsbus.Options{URL: nats.URL(), Beat: 100 * time.Millisecond, Timeout: 800 * time.Millisecond})
		require.NoError(t, err)
		srv, err := signaling.NewServer(signaling.Config{Secret: clusterSecret, Cluster: bus, Logger: testLogger(i)})
		require.NoError(t, err)
		hs := httptest.NewUnstartedServer(srv)
		conns := &connSet{Listener: hs.Listener}
		hs.Listener = conns
		hs.Start()
		n := &node{srv: srv, bus: bus, hs: hs, conns: conns, url: "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"}
		nodes[i] = n
		t.Cleanup(func() {
			if !n.dead {
				_ = srv.Close()
				hs.Close()
				_ = bus.Close()
			}
		})
	}
	return nodes
}

// urls lists the cluster's endpoints starting at node first.
func urls(nodes []*node, first int) string {
	var l []string
	for i := range nodes {
		l = append(l, nodes[(first+i)%len(nodes)].url)
	}
	return strings.Join(l, ",")
}

// next waits for the next message of type T, skipping others.
func next[T signaling.Message](t *testing.T, c *signaling.Client) T {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-c.Messages():
			require.True(t, ok, "connection ended: %v", c.Err())
			if v, ok := m.(T); ok {
				return v
			}
		case <-timeout:
			var zero T
			t.Fatalf("no %T in time", zero)
		}
	}
}

// formJob joins size ranks, rank r through node r%len(nodes), and waits
// for every Ready.
func formJob(t *testing.T, nodes []*node, job string, size int) []*signaling.Client {
	t.Helper()
	toks, err := signaling.MintSeats(clusterSecret, signaling.Claims{Job: job, Size: size, Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	cs := make([]*signaling.Client, size)
	var wg sync.WaitGroup
	errs := make([]error, size)
	for r := range size {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// rank r starts at server r (Dial rotates the list by rank)
			cs[r], errs[r] = signaling.Dial(ctx, urls(nodes, 0), job, toks[r], &signaling.DialOptions{Rank: &r, Host: "-"})
		})
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			_ = c.Close()
		}
	})
	for r, c := range cs {
		require.Equal(t, r, c.Rank())
		require.NotEmpty(t, c.Welcome().Resume, "a cluster's Welcome carries the seat's key")
		require.Equal(t, size, next[*signaling.Ready](t, c).Size)
	}
	return cs
}

// signalAll has every rank signal every other and checks each arrives,
// from the right rank.
func signalAll(t *testing.T, cs []*signaling.Client, round int) {
	t.Helper()
	require.True(t, trySignalAll(t, cs, round, time.Minute), "round %d of signals incomplete", round)
}

// trySignalAll is signalAll's round, reporting whether it completed
// within wait.
func trySignalAll(t *testing.T, cs []*signaling.Client, round int, wait time.Duration) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for from, c := range cs {
		for to := range cs {
			if to != from {
				require.NoError(t, c.Signal(ctx, to, signaling.SignalOffer, fmt.Appendf(nil, `"%d-%d-%d"`, round, from, to)))
			}
		}
	}
	for to, c := range cs {
		got := map[int]bool{}
		for len(got) < len(cs)-1 {
			select {
			case m, ok := <-c.Messages():
				require.True(t, ok, "connection ended: %v", c.Err())
				s, ok := m.(*signaling.Signal)
				if ok && string(s.Payload) == fmt.Sprintf(`"%d-%d-%d"`, round, s.From, to) {
					got[s.From] = true
				}
			case <-ctx.Done():
				return false
			}
		}
	}
	return true
}

// settle waits until signals flow between every pair again after a
// server's loss: those in flight at the loss may be lost, as link
// set-ups caught in it are (see Bus), but new ones pass.
func settle(t *testing.T, cs []*signaling.Client) {
	t.Helper()
	for round := 100; round < 130; round++ {
		if trySignalAll(t, cs, round, 3*time.Second) {
			return
		}
	}
	t.Fatal("signals do not flow after the loss")
}

func TestClusterJobAcrossServers(t *testing.T) {
	nodes := startCluster(t, 3)
	cs := formJob(t, nodes, "across", 6)
	signalAll(t, cs, 1)
	for r, c := range cs {
		require.Equal(t, nodes[r%3].url, c.URL(), "rank %d stays on its server", r)
	}
}

func TestClusterServerKilled(t *testing.T) {
	for victim := range 3 {
		t.Run(fmt.Sprintf("server%d", victim), func(t *testing.T) {
			nodes := startCluster(t, 3)
			cs := formJob(t, nodes, "killed", 6)
			signalAll(t, cs, 1)
			nodes[victim].kill()
			// every rank, those of the lost server too, reaches every other
			settle(t, cs)
			signalAll(t, cs, 2)
			for r, c := range cs {
				require.NotEqual(t, nodes[victim].url, c.URL(), "rank %d moved", r)
				require.NoError(t, c.Err())
			}
			// a clean finish: each rank leaves, the others hear it
			for r := 1; r < len(cs); r++ {
				require.NoError(t, cs[r].Close())
			}
			left := map[int]bool{}
			for len(left) < len(cs)-1 {
				l := next[*signaling.Left](t, cs[0])
				for _, r := range l.Ranks() {
					left[r] = true
				}
			}
		})
	}
}

func TestClusterDrain(t *testing.T) {
	nodes := startCluster(t, 3)
	cs := formJob(t, nodes, "drained", 6)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, nodes[0].srv.Drain(ctx))
	nodes[0].dead = true
	_ = nodes[0].bus.Close()
	nodes[0].hs.Close()
	settle(t, cs)
	signalAll(t, cs, 1)
	for r, c := range cs {
		require.NotEqual(t, nodes[0].url, c.URL(), "rank %d moved", r)
	}
}

func TestClusterResumeRefused(t *testing.T) {
	nodes := startCluster(t, 2)
	formJob(t, nodes, "refused", 2)
	toks, err := signaling.MintSeats(clusterSecret, signaling.Claims{Job: "refused", Size: 2, Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range nodes {
		for _, key := range []string{"wrong-key", "AAAAAAAAAAAAAAAAAAAAAAAA"} {
			ws, _, err := websocket.Dial(ctx, n.url, nil)
			require.NoError(t, err)
			data, err := signaling.Encode(&signaling.Join{Job: "refused", Token: toks[1], Rank: new(1), Kind: signaling.KindNative, Resume: key})
			require.NoError(t, err)
			require.NoError(t, ws.Write(ctx, websocket.MessageText, data))
			_, data, err = ws.Read(ctx)
			require.NoError(t, err)
			m, err := signaling.Decode(data)
			require.NoError(t, err)
			e, ok := m.(*signaling.Error)
			require.True(t, ok, "got %T", m)
			require.Equal(t, signaling.CodeResumeRefused, e.Code)
			_ = ws.CloseNow()
		}
	}
}

func testLogger(i int) *slog.Logger {
	if os.Getenv("CLUSTER_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil)).With("node", i)
}

// Telemetry from ranks on any server reaches the job's home, which holds
// the job's view and events for its dashboard.
func TestClusterTelemetryReachesHome(t *testing.T) {
	nodes := startCluster(t, 3)
	const job = "telemetry"
	cs := formJob(t, nodes, job, 3)
	for r, c := range cs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		now := time.Now().UnixMicro()
		require.NoError(t, c.Send(ctx, &signaling.Telemetry{Now: now,
			Ops: []signaling.OpEvent{{Op: "bcast", Comm: "world", Bytes: int64(8 * (r + 1)), Start: now - 10, End: now}}}))
		cancel()
	}
	var home *signaling.Server
	for _, n := range nodes {
		if _, ok := n.srv.View(job); ok {
			require.Nil(t, home, "one server holds the job's view")
			home = n.srv
		}
	}
	require.NotNil(t, home)
	got := map[int]int64{}
	var after uint64
	deadline := time.After(60 * time.Second)
	for len(got) < len(cs) {
		evs, next, wake, ok := home.Events(job, after, make([]signaling.Event, 64))
		require.True(t, ok)
		after = next
		for _, e := range evs {
			if e.Kind == signaling.EventOp {
				got[e.Rank] = e.Op.Bytes
			}
		}
		if len(got) < len(cs) {
			select {
			case <-wake:
			case <-deadline:
				t.Fatalf("ops of ranks %v only", got)
			}
		}
	}
	require.Equal(t, map[int]int64{0: 8, 1: 16, 2: 24}, got)
}
