//go:build linux

package signaling

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/stretchr/testify/require"
)

// browserGuard bounds the whole browser run: two builds, a browser start
// and the tests themselves.
const browserGuard = 5 * time.Minute

// TestClientInBrowser runs this package's tests built for GOOS=js (the
// browser transport in client_js_test.go, and the protocol tests) in
// Chromium through cmd/jsrun, against a server started here: the real
// Server, a native rank of the same job, endpoints that misbehave on
// purpose, a port that never answers and one that refuses. This is
// coder/websocket's TestWasm pattern: one test drives both sides.
func TestClientInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package for js and starts a browser")
	}
	browsertest.Require(t)
	leaktest.Check(t)
	ctx, cancel := context.WithTimeout(context.Background(), browserGuard)
	defer cancel()

	dir := t.TempDir()
	wasm, jsrun := filepath.Join(dir, "signaling.test.wasm"), filepath.Join(dir, "jsrun")
	goCmd(ctx, t, []string{"GOOS=js", "GOARCH=wasm"}, "test", "-c", "-o", wasm, ".")
	goCmd(ctx, t, nil, "build", "-o", jsrun, "../cmd/jsrun")

	// The page's origin is jsrun's own loopback port.
	srv, err := NewServer(Config{Secret: testSecret, OriginPatterns: []string{"127.0.0.1:*"}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	mux.Handle(pathBinary, misbehave(websocket.MessageBinary, []byte("{}")))
	mux.Handle(pathHuge, misbehave(websocket.MessageText, bytes.Repeat([]byte(" "), MaxMessageBytes+1)))
	hs := httptest.NewServer(mux)
	defer hs.Close()
	defer func() { require.NoError(t, srv.Close()) }()
	server := "ws" + strings.TrimPrefix(hs.URL, "http")

	silent := holdConnections(t)
	refused, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, refused.Close())

	tok, solo := mint(t, jsRelayJob, 2), mint(t, jsSoloJob, 1)
	grow, err := Mint(testSecret, Claims{Job: jsGrowJob, Size: 1, Max: 3, Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	peer := make(chan error, 1)
	go func() { peer <- echoRank(ctx, server+"/ws", tok) }()

	cmd := exec.CommandContext(ctx, jsrun, wasm, "-test.v")
	cmd.Env = append(os.Environ(),
		envJSServer+"="+server,
		envJSToken+"="+tok,
		envJSSolo+"="+solo,
		envJSSilent+"=ws://"+silent+"/ws",
		envJSRefused+"=ws://"+refused.Addr().String()+"/ws",
		envJSGrow+"="+grow,
	)
	out, err := cmd.CombinedOutput()
	t.Logf("browser run:\n%s", out)
	require.NoError(t, err)
	for _, name := range []string{"TestJSJoinRelayLeave", "TestJSRejected", "TestJSServerCloses", "TestJSRefusesFrames", "TestJSDialFails", "TestJSLateJoin", "TestRoundTrip"} {
		require.Contains(t, string(out), "--- PASS: "+name+" ", "%s ran and passed in the browser", name)
	}
	require.NoError(t, <-peer, "the native rank of the relay job")
}

func goCmd(ctx context.Context, t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s: %s", strings.Join(args, " "), out)
}

// misbehave answers a join with data of type typ instead of a welcome,
// then waits for the client to close.
func misbehave(typ websocket.MessageType, data []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(MaxMessageBytes)
		ctx, cancel := context.WithTimeout(r.Context(), hangGuard)
		defer cancel()
		if _, _, err := ws.Read(ctx); err != nil {
			return
		}
		if err := ws.Write(ctx, typ, data); err != nil {
			return
		}
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	})
}

// holdConnections listens on a loopback port that accepts connections
// and never answers them, until t ends; it returns the address.
func holdConnections(t *testing.T) string {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var held []net.Conn
		defer func() {
			for _, c := range held {
				_ = c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return ln.Addr().String()
}

// echoRank is rank 0 of jsRelayJob: it answers each signal of rank 1 with
// the same payload, and returns once rank 1 has left.
func echoRank(ctx context.Context, url, tok string) error {
	c, err := Dial(ctx, url, jsRelayJob, tok, &DialOptions{Rank: intp(0)})
	if err != nil {
		return err
	}
	defer c.Close()
	answered := false
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				return fmt.Errorf("connection ended: %w", c.Err())
			}
			switch m := m.(type) {
			case *Signal:
				if err := c.Signal(ctx, m.From, SignalAnswer, m.Payload); err != nil {
					return err
				}
				answered = true
			case *Left:
				if !answered {
					return errors.New("rank 1 left without a signal")
				}
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
