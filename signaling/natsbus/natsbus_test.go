package natsbus

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// freePorts reserves n loopback ports and frees them for the caller.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

// TestEmbeddedCluster runs three embedded NATS servers routed to each
// other (as three `signal serve -nats-embedded` machines would), a bus
// on each with replicated buckets, and checks they agree on a job's home
// and see each other's state, and that a lost server's job is taken over
// by exactly one of the others.
func TestEmbeddedCluster(t *testing.T) {
	ports := freePorts(t, 3)
	var nodes []*Embedded
	for i := range 3 {
		var routes []string
		for j := range 3 {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[j]))
			}
		}
		e, err := StartEmbedded(EmbeddedOptions{Listen: "127.0.0.1:0", ClusterListen: fmt.Sprintf("127.0.0.1:%d", ports[i]), Routes: routes, Log: os.Getenv("NATS_LOG") != ""})
		require.NoError(t, err)
		t.Cleanup(e.Shutdown)
		nodes = append(nodes, e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var buses []*Bus
	for _, e := range nodes {
		var b *Bus
		var err error
		for {
			// the NATS cluster elects its JetStream leader once routed
			b, err = New(ctx, Options{URL: e.URL(), Replicas: 3, Beat: 100 * time.Millisecond, Timeout: time.Second})
			if err == nil || ctx.Err() != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		buses = append(buses, b)
	}
	lost := make([]chan string, len(buses))
	for i, b := range buses {
		lost[i] = make(chan string, 4)
		require.NoError(t, b.Start(func(string, []byte) {}, func(s string) { lost[i] <- s }))
	}
	home, took, err := buses[0].Home(ctx, "job.with.dots")
	require.NoError(t, err)
	require.False(t, took)
	require.Equal(t, buses[0].ID(), home)
	for _, b := range buses[1:] {
		h, took, err := b.Home(ctx, "job.with.dots")
		require.NoError(t, err)
		require.False(t, took)
		require.Equal(t, home, h, "every server names the same home")
	}
	require.NoError(t, buses[0].SaveJob("job.with.dots", []byte(`{"x":1}`)))
	got, err := buses[2].LoadJob("job.with.dots")
	require.NoError(t, err)
	require.Equal(t, `{"x":1}`, string(got))

	// the home goes: the others see it lost, one takes the job over
	require.NoError(t, buses[0].Leave())
	for _, l := range lost[1:] {
		select {
		case s := <-l:
			require.Equal(t, buses[0].ID(), s)
		case <-ctx.Done():
			t.Fatal("loss not seen")
		}
	}
	type res struct {
		home string
		took bool
	}
	results := make(chan res, 2)
	for _, b := range buses[1:] {
		go func() {
			h, took, err := b.Home(ctx, "job.with.dots")
			if err != nil {
				h = err.Error()
			}
			results <- res{h, took}
		}()
	}
	a, b := <-results, <-results
	require.Equal(t, a.home, b.home, "one new home")
	require.NotEqual(t, buses[0].ID(), a.home)
	require.True(t, a.took != b.took, "exactly one took it over")
	require.NoError(t, buses[1].DropJob("job.with.dots"))
	got, err = buses[2].LoadJob("job.with.dots")
	require.NoError(t, err)
	require.Nil(t, got)
}
