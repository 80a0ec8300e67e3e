package signaling

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// These tests run in Chromium against the native server of
// TestClientInBrowser, which passes its addresses in the environment;
// run alone, they skip. They do not use leaktest: under js, every
// wake-up from a timer or event runs on a goroutine of its own, which
// that count would see.

var _ transport = (*jsTransport)(nil)

type jsTestEnv struct{ server, token, solo, silent, refused string }

func jsEnv(t *testing.T) jsTestEnv {
	t.Helper()
	e := jsTestEnv{os.Getenv(envJSServer), os.Getenv(envJSToken), os.Getenv(envJSSolo), os.Getenv(envJSSilent), os.Getenv(envJSRefused)}
	if e.server == "" {
		t.Skip(envJSServer + " is not set: TestClientInBrowser runs these tests")
	}
	return e
}

func guard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// A browser rank joins beside a native rank, relays a signal through the
// server and back, and leaves.
func TestJSJoinRelayLeave(t *testing.T) {
	env := jsEnv(t)
	ctx := guard(t)
	c := dial(t, env.server+"/ws", jsRelayJob, env.token, &DialOptions{Rank: intp(1)})
	require.Equal(t, 1, c.Rank())
	require.Equal(t, 2, c.Size())
	require.NotNil(t, c.Welcome().Limits, "the server tells its rate limit")
	r := recvAs[*Ready](t, c)
	require.Equal(t, []ClientKind{KindNative, KindBrowser}, r.Kinds, "the browser's default kind")

	// Not only ASCII: text frames carry UTF-8 both ways.
	payload := json.RawMessage(`{"type":"offer","sdp":"v=0 üñïçødé ☃ 𝄞"}`)
	require.NoError(t, c.Signal(ctx, 0, SignalOffer, payload))
	s := recvAs[*Signal](t, c)
	require.Equal(t, 0, s.From)
	require.Equal(t, SignalAnswer, s.Kind)
	require.JSONEq(t, string(payload), string(s.Payload))

	require.NoError(t, c.Close(), "a clean closing handshake")
	for range c.Messages() {
	}
	require.ErrorIs(t, c.Err(), ErrClosed)
	require.ErrorIs(t, c.Close(), ErrClosed)
	require.ErrorIs(t, c.Send(ctx, &Ping{}), ErrClosed)
}

// The server's refusal reaches the caller as a *RemoteError; http URLs
// work as in coder/websocket.
func TestJSRejected(t *testing.T) {
	env := jsEnv(t)
	_, err := Dial(guard(t), "http"+strings.TrimPrefix(env.server, "ws")+"/ws", "js-other", "bogus.token", nil)
	require.ErrorIs(t, err, ErrRejected)
	require.ErrorIs(t, err, ErrBadToken)
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	require.Equal(t, CodeBadToken, re.Code)
}

// A server error after the join ends Messages with a *RemoteError.
func TestJSServerCloses(t *testing.T) {
	env := jsEnv(t)
	c := dial(t, env.server+"/ws", jsSoloJob, env.solo, nil)
	recvAs[*Ready](t, c)
	// A second join is a protocol violation: an error message, then a close.
	require.NoError(t, c.Send(guard(t), &Join{Job: jsSoloJob, Token: env.solo, Kind: KindBrowser}))
	expectClosedWith(t, c, CodeProtocol)
}

// Frames the protocol does not allow fail the join with the package's
// decoding errors.
func TestJSRefusesFrames(t *testing.T) {
	env := jsEnv(t)
	for path, want := range map[string]error{pathBinary: ErrMalformed, pathHuge: ErrTooLarge} {
		t.Run(path, func(t *testing.T) {
			_, err := Dial(guard(t), env.server+path, jsSoloJob, env.solo, nil)
			require.ErrorIs(t, err, want)
		})
	}
}

// Dial gives up when its context ends, and reports a connection that
// never opened.
func TestJSDialFails(t *testing.T) {
	env := jsEnv(t)
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		stop := errors.New("test gives up")
		done := make(chan error, 1)
		go func() {
			_, err := Dial(ctx, env.silent, jsSoloJob, env.solo, nil)
			done <- err
		}()
		cancel(stop)
		select {
		case err := <-done:
			require.ErrorIs(t, err, stop)
		case <-guard(t).Done():
			t.Fatal("Dial did not return after its context ended")
		}
	})
	t.Run("refused", func(t *testing.T) {
		_, err := Dial(guard(t), env.refused, jsSoloJob, env.solo, nil)
		var ce *closeError
		require.ErrorAs(t, err, &ce)
		require.False(t, ce.clean)
	})
	t.Run("bad url", func(t *testing.T) {
		_, err := Dial(guard(t), "ws://[::1", jsSoloJob, env.solo, nil)
		require.Error(t, err)
	})
}
