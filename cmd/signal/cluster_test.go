//go:build !js

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/signaling/natsbus"
	"github.com/stretchr/testify/require"
)

// TestMain lets the cluster test run `signal serve` processes of this
// binary: with MESHMPI_SIGNAL_TEST_SERVE=1 it is the command itself.
func TestMain(m *testing.M) {
	if os.Getenv("MESHMPI_SIGNAL_TEST_SERVE") == "1" {
		if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "signal:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var listening = regexp.MustCompile(`msg="signaling server listening" addr=(\S+)`)

// serverProc is a `signal serve` process of the test's cluster.
type serverProc struct {
	cmd  *exec.Cmd
	url  string
	logs *strings.Builder
	mu   sync.Mutex
}

func startServerProc(t *testing.T, args ...string) *serverProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "-listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "MESHMPI_SIGNAL_TEST_SERVE=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &serverProc{cmd: cmd, logs: new(strings.Builder)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			p.mu.Lock()
			t.Logf("server %s:\n%s", p.url, p.logs.String())
			p.mu.Unlock()
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.logs.WriteString(line + "\n")
			p.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		p.url = "ws://" + a + "/ws"
	case <-time.After(2 * time.Minute):
		t.Fatal("signal serve did not start")
	}
	return p
}

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestClusterSurvivesServerLoss runs a 16-rank job of native rank
// processes spread over three signaling servers of a cluster (one NATS,
// embedded in the test), SIGKILLs one server mid-job and SIGTERMs
// (drains) another: the job completes, every rank's results checked.
func TestClusterSurvivesServerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 servers and 16 rank processes")
	}
	nats, err := natsbus.StartEmbedded(natsbus.EmbeddedOptions{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(nats.Shutdown)
	const secret = "cluster-test-secret-0123456789abcdef"
	var servers []*serverProc
	for range 3 {
		servers = append(servers, startServerProc(t, "-secret", secret, "-nats", nats.URL(), "-cluster-timeout", "1500ms"))
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "clusterrank")
	build := exec.Command("go", "build", "-o", bin, "./testdata/clusterrank")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	const size = 16
	toks, err := signaling.MintSeats([]byte(secret), signaling.Claims{Job: "cluster-kill", Size: size, Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	goFile := filepath.Join(dir, "go")
	type rankProc struct {
		cmd    *exec.Cmd
		out    *strings.Builder
		linked chan struct{}
		done   chan error
	}
	ranks := make([]*rankProc, size)
	for r := range size {
		var list []string
		for i := range servers {
			list = append(list, servers[(r+i)%len(servers)].url)
		}
		cmd := exec.Command(bin, goFile)
		cmd.Env = append(os.Environ(), "MESHMPI_SIGNAL="+strings.Join(list, ","), "MESHMPI_JOB=cluster-kill",
			"MESHMPI_TOKEN="+toks[r], "MESHMPI_JOIN_TIMEOUT=2m", "MESHMPI_TIMEOUT=2m")
		rp := &rankProc{cmd: cmd, out: new(strings.Builder), linked: make(chan struct{}), done: make(chan error, 1)}
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = rp.out
		require.NoError(t, cmd.Start())
		go func() {
			sc := bufio.NewScanner(stdout)
			once := sync.Once{}
			for sc.Scan() {
				if sc.Text() == "linked" {
					once.Do(func() { close(rp.linked) })
				}
			}
			rp.done <- cmd.Wait()
		}()
		ranks[r] = rp
		t.Cleanup(func() { _ = cmd.Process.Kill() })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for r, rp := range ranks {
		select {
		case <-rp.linked:
		case err := <-rp.done:
			t.Fatalf("rank %d ended before linking: %v\n%s", r, err, rp.out.String())
		case <-ctx.Done():
			t.Fatalf("rank %d did not link", r)
		}
	}
	// mid-job: one server dies, another drains
	require.NoError(t, servers[1].cmd.Process.Signal(syscall.SIGKILL))
	require.NoError(t, servers[2].cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, os.WriteFile(goFile, nil, 0o600))
	for r, rp := range ranks {
		select {
		case err := <-rp.done:
			require.NoError(t, err, "rank %d:\n%s", r, rp.out.String())
		case <-ctx.Done():
			t.Fatalf("rank %d did not finish:\n%s", r, rp.out.String())
		}
	}
	// the ranks of the lost and the drained server took their seats back
	// through the one left
	metrics, err := httpGet(strings.Replace(strings.TrimSuffix(servers[0].url, "/ws"), "ws://", "http://", 1) + "/metrics")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^meshmpi_signal_resumed_total (\d+)`).FindStringSubmatch(metrics)
	require.NotNil(t, m, "resumed_total in /metrics")
	var resumed int
	fmt.Sscan(m[1], &resumed)
	// each rank starts at a server of its list picked at random (the
	// ranks are not told their numbers): about two thirds of them had
	// servers 1 or 2, and all of those are on server 0 now
	t.Logf("%d seats resumed through server 0", resumed)
	require.Positive(t, resumed, "the ranks of servers 1 and 2 took their seats back through server 0")
	require.Contains(t, metrics, "meshmpi_signal_cluster_nats_up 1")
	drained := make(chan error, 1)
	go func() { drained <- servers[2].cmd.Wait() }()
	select {
	case err := <-drained:
		require.NoError(t, err, "the drained server exits cleanly")
	case <-ctx.Done():
		t.Fatal("the drained server did not exit")
	}
}
