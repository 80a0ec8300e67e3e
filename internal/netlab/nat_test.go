//go:build linux

package netlab

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/lockedbuf"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/signaling"
)

func TestMain(m *testing.M) { testbin.Main(m) }

var (
	buildSignal   = testbin.Once(gobuild.Go{}, "github.com/meshmpi/meshmpi/cmd/signal", "signal")
	buildPathrank = testbin.Once(gobuild.Go{}, "github.com/meshmpi/meshmpi/internal/netlab/pathrank", "pathrank")
)

const labSecret = "netlab-secret-0123456789"

// server is `signal serve` with its embedded STUN/TURN server on a public
// host of the lab.
type server struct {
	url  string // the websocket
	base string // http://host:port, for pages
	cmd  *exec.Cmd
	log  *lockedbuf.Buffer // its log: joins, departures, the links' paths
}

// paths returns the links of job whose paths the server logged, as
// "rank→peer local/remote".
func (s *server) paths(job string) []string {
	var out []string
	for _, line := range strings.Split(s.log.String(), "\n") {
		if !strings.Contains(line, `msg="link path"`) || !strings.Contains(line, " job="+job+" ") {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		out = append(out, f["rank"]+"→"+f["peer"]+" "+f["local"]+"/"+f["remote"])
	}
	return out
}

func startServer(t *testing.T, l *Lab, h Host, args ...string) *server {
	return startSignal(t, l, h, append([]string{"-turn", net.JoinHostPort(h.IP.String(), "3478")}, args...)...)
}

// startSignal starts signal serve on h with args and no embedded TURN
// server unless args ask for one.
func startSignal(t *testing.T, l *Lab, h Host, args ...string) *server {
	s, err := launchSignal(t, l, h, args...)
	require.NoError(t, err)
	return s
}

// launchSignal is startSignal for any goroutine: it reports what went
// wrong instead of failing the test. The test's cleanup stops the server.
func launchSignal(t *testing.T, l *Lab, h Host, args ...string) (*server, error) {
	bin, err := buildSignal()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(h.IP.String(), "8080")
	cmd := l.Command(h, bin, append([]string{"serve", "-listen", addr, "-log-level", "info"}, args...)...)
	cmd.Env = append(os.Environ(), "MESHMPI_SIGNAL_SECRET="+labSecret)
	log := new(lockedbuf.Buffer)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	// ready when it answers /healthz, from inside the lab
	// (bash's /dev/tcp connects; the loop's bound is a hang guard)
	probe := l.Command(h, "bash", "-c", fmt.Sprintf("for i in $(seq 1 600); do (exec 3<>/dev/tcp/%s/8080) 2>/dev/null && exit 0; sleep 0.1; done; exit 1", h.IP))
	if out, err := probe.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("signal serve did not come up: %w: %s\n%s", err, out, log)
	}
	return &server{url: "ws://" + addr + "/ws", base: "http://" + addr, cmd: cmd, log: log}, nil
}

// linkLine is one "link" line of a pathrank: how rank reached peer.
type linkLine struct {
	rank, peer          int
	kind, local, remote string
}

func (l linkLine) relayed() bool { return l.local == "relay" || l.remote == "relay" }

// bench is rank 0's figures for one peer.
type bench struct{ latUS, mbps float64 }

// runJob runs one pathrank per host as one job and returns their link
// lines and rank 0's figures; every rank must end with "pathrank ok".
func runJob(t *testing.T, l *Lab, srv *server, job string, hosts []Host) ([]linkLine, map[int]bench) {
	return runProcs(t, l, jobProcs(t, srv, job, hosts), len(hosts))
}

// jobProcs are one pathrank per host, ranks in hosts' order, with args.
func jobProcs(t *testing.T, srv *server, job string, hosts []Host, args ...string) []proc {
	bin, err := buildPathrank()
	require.NoError(t, err)
	tokens, err := signaling.MintSeats([]byte(labSecret), signaling.Claims{Job: job, Size: len(hosts), Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	var procs []proc
	for r, h := range hosts {
		procs = append(procs, proc{host: h, argv: append([]string{bin}, args...),
			env: []string{"MESHMPI_SIGNAL=" + srv.url, "MESHMPI_JOB=" + job, "MESHMPI_TOKEN=" + tokens[r], "MESHMPI_RANK=" + strconv.Itoa(r)}})
	}
	return procs
}

// proc is a process of a job: a pathrank, or a meshrun that starts
// several, whose output lines it prefixes ("[r] ").
type proc struct {
	host     Host
	launcher bool
	argv     []string
	env      []string
	onLine   func(line string) // called with each output line, if set
}

// runProcs runs procs, which make up a job of size ranks, and returns the
// ranks' link lines and rank 0's figures; every process must succeed and
// every rank end with "pathrank ok".
func runProcs(t *testing.T, l *Lab, procs []proc, size int) ([]linkLine, map[int]bench) {
	res := execProcs(t, l, procs)
	for i, p := range procs {
		require.NoError(t, res.errs[i], "%s in %s:\n%s", p.argv[0], p.host.NS, res.outputs[i])
	}
	for r := range size {
		require.True(t, res.ok[r], "rank %d did not report pathrank ok; output:\n%s", r, strings.Join(res.outputs, "\n"))
	}
	return res.links, res.benches
}

// jobResult is what became of a job's processes.
type jobResult struct {
	links   []linkLine
	benches map[int]bench
	ok      map[int]bool // ranks that reported pathrank ok
	outputs []string     // per process
	errs    []error      // per process
	ended   []time.Time  // per process
}

// execProcs runs procs until they end (or the hang guard kills them).
func execProcs(t *testing.T, l *Lab, procs []proc) jobResult {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard, not a timing
	defer cancel()
	var (
		mu      sync.Mutex
		links   []linkLine
		benches = map[int]bench{}
		ok      = map[int]bool{}
		wg      sync.WaitGroup
		outputs = make([]string, len(procs))
		errs    = make([]error, len(procs))
		ended   = make([]time.Time, len(procs))
	)
	for i, p := range procs {
		cmd := l.Command(p.host, p.argv[0], p.argv[1:]...)
		cmd.Env = append(os.Environ(), p.env...)
		pr, pw := io.Pipe()
		cmd.Stdout, cmd.Stderr = pw, pw
		require.NoError(t, cmd.Start())
		wg.Add(2)
		go func() {
			defer wg.Done()
			errs[i] = cmd.Wait()
			ended[i] = time.Now()
			pw.Close()
		}()
		go func() {
			defer wg.Done()
			var all strings.Builder
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				line := sc.Text()
				all.WriteString(line + "\n")
				if p.launcher { // meshrun's "[r] " prefix
					_, line, _ = strings.Cut(line, "] ")
				}
				if p.onLine != nil {
					p.onLine(line)
				}
				f := strings.Fields(line)
				mu.Lock()
				switch {
				case len(f) >= 6 && f[0] == "link" && f[3] != "wasi-host": // a guest cannot see its host's links
					r, _ := strconv.Atoi(f[1])
					peer, _ := strconv.Atoi(f[2])
					links = append(links, linkLine{rank: r, peer: peer, kind: f[3], local: f[4], remote: f[5]})
				case len(f) == 4 && f[0] == "bench":
					peer, _ := strconv.Atoi(f[1])
					lat, _ := strconv.ParseFloat(f[2], 64)
					bw, _ := strconv.ParseFloat(f[3], 64)
					benches[peer] = bench{lat, bw}
				case len(f) == 3 && f[0] == "pathrank" && f[1] == "ok":
					r, _ := strconv.Atoi(f[2])
					ok[r] = true
				}
				mu.Unlock()
			}
			outputs[i] = all.String()
		}()
		go func() { // the hang guard
			<-ctx.Done()
			if ctx.Err() == context.DeadlineExceeded {
				_ = cmd.Process.Kill()
			}
		}()
	}
	wg.Wait()
	return jobResult{links: links, benches: benches, ok: ok, outputs: outputs, errs: errs, ended: ended}
}

// The NAT matrix: ranks behind endpoint-independent NATs reach each other
// directly (server-reflexive candidates from the embedded STUN server),
// ranks behind symmetric NATs on both sides through the embedded TURN
// relay, and a public rank and a NATed one directly. Every job passes its
// Allreduce and measures its links; the path types are asserted per link.
func TestNATMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("network namespaces in -short mode")
	}
	l := New(t)
	srv := startServer(t, l, l.PublicHost("srv"))
	pub := l.PublicHost("pub")
	eim1, eim2 := l.Home("eim1", EndpointIndependent), l.Home("eim2", EndpointIndependent)
	sym1, sym2 := l.Home("sym1", Symmetric), l.Home("sym2", Symmetric)

	for _, tc := range []struct {
		name    string
		hosts   []Host
		relayed bool
	}{
		{"endpoint-independent NATs", []Host{eim1, eim2}, false},
		{"symmetric NATs", []Host{sym1, sym2}, true},
		{"public and NATed", []Host{pub, eim1}, false},
		{"three homes", []Host{eim1, eim2, pub}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			links, benches := runJob(t, l, srv, sanitize(t.Name()), tc.hosts)
			n := len(tc.hosts)
			require.Len(t, links, n*(n-1), "every rank reports every peer")
			for _, li := range links {
				t.Logf("rank %d → %d: %s/%s", li.rank, li.peer, li.local, li.remote)
				require.Equal(t, "webrtc", li.kind, "%+v", li)
				require.Equal(t, tc.relayed, li.relayed(), "rank %d → %d: %s/%s", li.rank, li.peer, li.local, li.remote)
				if behindNAT(tc.hosts[li.peer]) && !li.relayed() {
					// a NATed peer's host address is private: the pair
					// must use the address its NAT mapped
					require.NotEqual(t, "host", li.remote, "rank %d → %d", li.rank, li.peer)
				}
			}
			for peer, b := range benches {
				t.Logf("rank 0 ↔ %d: 8 B one-way %.1f µs, 1 MiB %.1f MB/s", peer, b.latUS, b.mbps)
			}
			// the server's view: every rank reported its links' paths
			// (a link reports once it is up: both ends of each pair)
			seen := srv.paths(sanitize(t.Name()))
			require.Len(t, seen, n*(n-1), "%q", seen)
			for _, p := range seen {
				require.Equal(t, tc.relayed, strings.Contains(p, "relay"), p)
			}
		})
	}
}

func behindNAT(h Host) bool { return !h.IP.Equal(h.Public) }

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

var (
	buildMeshrun      = testbin.Once(gobuild.Go{}, "github.com/meshmpi/meshmpi/cmd/meshrun", "meshrun")
	buildPathrankWASI = testbin.Once(gobuild.Go{GOOS: "wasip1", GOARCH: "wasm"}, "github.com/meshmpi/meshmpi/internal/netlab/pathrank", "pathrank.wasm")
)

// A job across hosts with no launcher of its own: `signal serve` on host
// A, `meshrun join URL -n 2` adding two native ranks on host B and two WASI
// ranks on host C, and one more rank from a home behind a NAT; all with one
// open token, as the README's "run a job across machines" shows.
func TestMultiHostJob(t *testing.T) {
	if testing.Short() {
		t.Skip("network namespaces in -short mode")
	}
	l := New(t)
	a, b, c := l.PublicHost("a"), l.PublicHost("b"), l.PublicHost("c")
	home := l.Home("home", EndpointIndependent)
	srv := startServer(t, l, a)
	meshrun, err := buildMeshrun()
	require.NoError(t, err)
	native, err := buildPathrank()
	require.NoError(t, err)
	wasm, err := buildPathrankWASI()
	require.NoError(t, err)
	const job, size = "multihost", 5
	tok, err := signaling.Mint([]byte(labSecret), signaling.Claims{Job: job, Size: size, Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	join := func(h Host, n int, target string) proc {
		return proc{host: h, launcher: true, argv: []string{meshrun, "join", srv.url, "--job", job, "--token", tok, "-n", strconv.Itoa(n), target, "-pings", "50", "-mib", "4"}}
	}
	links, benches := runProcs(t, l, []proc{join(b, 2, native), join(c, 2, wasm), join(home, 1, native)}, size)
	// native ranks report their WebRTC links (a WASI guest's links are its
	// host's, which the guest cannot see)
	require.Len(t, links, 3*(size-1))
	shm := 0
	for _, li := range links {
		if li.kind == "shm" {
			shm++ // the two native ranks of host b share its memory
			continue
		}
		require.Equal(t, "webrtc", li.kind, "%+v", li)
		require.False(t, li.relayed(), "public hosts and an endpoint-independent NAT connect directly: %+v", li)
	}
	require.Equal(t, 2, shm, "host b's two native ranks link over shared memory, each end reporting it: %+v", links)
	for peer, b := range benches {
		t.Logf("rank 0 ↔ %d: 8 B one-way %.1f µs, 1 MiB %.1f MB/s", peer, b.latUS, b.mbps)
	}
}

// A path that breaks while both ranks live heals, by ICE restart where
// the old path cannot come back: a 64 MiB transfer cut off for 3 s
// mid-way completes intact, with no error, and so does one whose NAT
// forgets its mappings mid-way, and 256 MiB between ranks behind
// symmetric NATs whose relay allocation is lost (UDP mapping expired,
// relay restarted). An outage longer than a link's restart window (6 s
// after ICE notices, 2 s in) ends in ErrProcFailed on both sides instead
// of a hang.
func TestOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("network namespaces in -short mode")
	}
	l := New(t)
	srv := startServer(t, l, l.PublicHost("srv"))
	a, b := l.PublicHost("a"), l.PublicHost("b")

	t.Run("3 s heals", func(t *testing.T) {
		procs := jobProcs(t, srv, "outage-short", []Host{a, b}, "-transfer", "64")
		restored := make(chan struct{})
		atTransferStart(&procs[0], func() {
			l.Cut(b)
			go func() { // the outage's length, not a wait for an event
				time.Sleep(3 * time.Second)
				l.Restore(b)
				close(restored)
			}()
		})
		res := execProcs(t, l, procs)
		<-restored
		requireTransferred(t, res)
	})

	t.Run("NAT mappings flushed", func(t *testing.T) {
		home := l.Home("flush", EndpointIndependent)
		procs := jobProcs(t, srv, "outage-flush", []Host{a, home}, "-transfer", "64")
		atTransferStart(&procs[0], func() { l.FlushNAT(home) })
		res := execProcs(t, l, procs)
		requireTransferred(t, res)
	})

	// The path that changes for good: both ranks behind symmetric NATs
	// talk through the relay; one NAT forgets its UDP mappings mid-way,
	// so its rank's allocation is no longer reachable from its new port.
	// Only an ICE restart (a new allocation, new candidates) heals that.
	t.Run("relay mapping lost", func(t *testing.T) {
		h1, h2 := l.Home("lost1", Symmetric), l.Home("lost2", Symmetric)
		procs := jobProcs(t, srv, "outage-relay", []Host{h1, h2}, "-transfer", "256")
		atTransferStart(&procs[0], func() { l.ExpireUDP(h1) })
		res := execProcs(t, l, procs)
		requireTransferred(t, res)
		requireRelayRestarted(t, res)
	})

	// A relay that restarts loses every allocation: the ranks behind
	// symmetric NATs reach each other only through it (a TURN server of
	// its own, the job's -ice server), so their link heals only by
	// restarting ICE against the relay once it is back.
	t.Run("relay restarted", func(t *testing.T) {
		relayHost := l.PublicHost("relay")
		const relaySecret = "a relay's static-auth-secret"
		relayArgs := []string{"-turn", net.JoinHostPort(relayHost.IP.String(), "3478"), "-turn-secret", relaySecret}
		relay := startSignal(t, l, relayHost, relayArgs...)
		main := startSignal(t, l, l.PublicHost("sig"), "-ice", "turn:"+net.JoinHostPort(relayHost.IP.String(), "3478"), "-ice-secret", relaySecret)
		h1, h2 := l.Home("rr1", Symmetric), l.Home("rr2", Symmetric)
		procs := jobProcs(t, main, "outage-relay-restart", []Host{h1, h2}, "-transfer", "256")
		restarted := make(chan error, 1)
		atTransferStart(&procs[0], func() {
			go func() {
				_ = relay.cmd.Process.Kill()
				_ = relay.cmd.Wait()
				_, err := launchSignal(t, l, relayHost, relayArgs...)
				restarted <- err
			}()
		})
		res := execProcs(t, l, procs)
		require.NoError(t, <-restarted, "the relay's restart")
		requireTransferred(t, res)
		requireRelayRestarted(t, res)
	})

	t.Run("long outage fails", func(t *testing.T) {
		procs := jobProcs(t, srv, "outage-long", []Host{a, b}, "-transfer", "1024")
		var cut time.Time
		atTransferStart(&procs[0], func() { cut = time.Now(); l.Cut(b) })
		res := execProcs(t, l, procs)
		l.Restore(b)
		for r := range 2 {
			require.Error(t, res.errs[r], "rank %d:\n%s", r, res.outputs[r])
			require.Contains(t, res.outputs[r], "process failed", "rank %d", r)
			t.Logf("rank %d ended %v after the cut", r, res.ended[r].Sub(cut).Round(time.Millisecond))
		}
	})
}

// What the relay costs, in one job: rank 0 behind a symmetric NAT reaches
// rank 1, behind another, through the relay, and rank 2 on the public
// network directly; it measures both links alike. The figures are logged
// (timings are the benchmarks' business, not a test's): the README's
// relay-cost row comes from here.
func TestRelayCost(t *testing.T) {
	if testing.Short() {
		t.Skip("network namespaces in -short mode")
	}
	l := New(t)
	srv := startServer(t, l, l.PublicHost("srv"))
	hosts := []Host{l.Home("sym1", Symmetric), l.Home("sym2", Symmetric), l.PublicHost("pub")}
	links, benches := runProcs(t, l, jobProcs(t, srv, "relay-cost", hosts, "-pings", "1000", "-mib", "64"), len(hosts))
	for _, li := range links {
		if li.rank == 0 {
			require.Equal(t, li.peer == 1, li.relayed(), "rank 0 → %d: %s/%s", li.peer, li.local, li.remote)
		}
	}
	relay, direct := benches[1], benches[2]
	t.Logf("relay: 8 B one-way %.1f µs, 1 MiB %.1f MB/s; direct: %.1f µs, %.1f MB/s; bandwidth %.2f× direct, latency %.1f µs over direct",
		relay.latUS, relay.mbps, direct.latUS, direct.mbps, relay.mbps/direct.mbps, relay.latUS-direct.latUS)
}

// atTransferStart makes p call f once, when its transfer has started.
func atTransferStart(p *proc, f func()) {
	var once sync.Once
	p.onLine = func(line string) {
		if line == "transfer started" {
			once.Do(f)
		}
	}
}

// requireTransferred checks that both ranks of a -transfer job ended
// well, rank 1 having checked every byte.
func requireTransferred(t *testing.T, res jobResult) {
	t.Helper()
	for r := range 2 {
		require.NoError(t, res.errs[r], "rank %d:\n%s", r, res.outputs[r])
		require.Contains(t, res.outputs[r], "transfer ok")
	}
}

// requireRelayRestarted checks that rank 0 reached rank 1 through the
// relay, at the end as at the start, after at least one ICE restart.
func requireRelayRestarted(t *testing.T, res jobResult) {
	t.Helper()
	require.Regexp(t, `link 0 1 webrtc (relay \S+|\S+ relay) \S+ restarts=[1-9]`, res.outputs[0])
}
