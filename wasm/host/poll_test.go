//go:build !js && !wasip1

package host

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sock"

	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/lockedbuf"
	"github.com/meshmpi/meshmpi/internal/testbin"
)

// warmCache, when set (race_test.go), fills the compilation cache dir
// with the machine code of the module at path.
var warmCache func(path, dir string)

var buildFlood = testbin.Once(gobuild.Go{GOOS: "wasip1", GOARCH: "wasm"}, "github.com/meshmpi/meshmpi/wasm/host/testdata/flood", "flood.wasm")

// A guest that writes faster than its host reads must wait for its socket
// to drain: the Go runtime then asks poll_oneoff to wait for writability.
// wazero answers that with an error event, which the runtime took for an
// error on the socket ("not pollable"), failing the guest's stream; the
// host's poll_oneoff answers it. The host here reads slowly on purpose
// (a loaded machine's host does), and every byte must arrive.
func TestGuestWaitsToWrite(t *testing.T) {
	path, err := buildFlood()
	require.NoError(t, err)
	module, err := os.ReadFile(path)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	cache := t.TempDir()
	if warmCache != nil {
		warmCache(path, cache)
	}
	t0 := time.Now()
	p, err := compile(ctx, module, cache, false)
	require.NoError(t, err)
	t.Logf("compiled in %v", time.Since(t0))
	t0 = time.Now()
	defer func() { t.Logf("ran in %v, %d polls", time.Since(t0), p.poll.calls.Load()) }()
	defer p.Close(ctx)

	const mib = 32
	port, err := freePort()
	require.NoError(t, err)
	wake := newBell()
	sctx := withBell(sock.WithConfig(ctx, sock.NewConfig().WithTCPListener("127.0.0.1", port)), wake)
	var out lockedbuf.Buffer
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("flood", "-mib", "32").WithStdout(&out).WithStderr(&out)

	exited := make(chan struct{})
	read := make(chan int, 1)
	go func() {
		conn, err := dialGuest(ctx, port, exited)
		if err != nil {
			read <- -1
			return
		}
		defer conn.Close()
		wake.ring()
		buf := make([]byte, 64<<10)
		n := 0
		for n < mib<<20 { // the guest's end closes only with its module
			k, err := conn.Read(buf)
			n += k
			if err != nil {
				break
			}
			if n%(1<<20) < k {
				time.Sleep(2 * time.Millisecond) // a slow host: the guest's writes must wait
			}
		}
		time.Sleep(10 * time.Millisecond) // the guest waits for the answer in poll_oneoff
		_, _ = conn.Write([]byte{1})
		wake.ring()
		read <- n
	}()
	mod, err := p.rt.InstantiateModule(sctx, p.mod, cfg)
	close(exited)
	if mod != nil {
		mod.Close(ctx)
	}
	require.NoError(t, err, "%s", out.String())
	require.Equal(t, mib<<20, <-read, "%s", out.String())
	require.Contains(t, out.String(), "flood ok")
	require.Greater(t, p.poll.calls.Load(), int64(0), "the guest never waited")
	require.NotContains(t, strings.ToLower(out.String()), "error")
}
