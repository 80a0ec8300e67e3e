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

type jsTestEnv struct{ server, token, solo, silent, refused, grow string }

func jsEnv(t *testing.T) jsTestEnv {
	t.Helper()
	e := jsTestEnv{os.Getenv(envJSServer), os.Getenv(envJSToken), os.Getenv(envJSSolo), os.Getenv(envJSSilent), os.Getenv(envJSRefused), os.Getenv(envJSGrow)}
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

// A browser rank of a job that grows hears its max and, once the job
// formed, of a late rank's arrival (joined) and departure; the late rank,
// a browser too, hears it is late, its max and every rank's kind, and is
// refused past max: the browser build decodes every field and message of
// growth.
func TestJSLateJoin(t *testing.T) {
	env := jsEnv(t)
	ctx := guard(t)
	url := env.server + "/ws"
	first := dial(t, url, jsGrowJob, env.grow, nil)
	require.Equal(t, 3, first.Max())
	require.False(t, first.Late())
	require.Equal(t, &Ready{Size: 1, Kinds: []ClientKind{KindBrowser}, Max: 3}, recvAs[*Ready](t, first))

	late := dial(t, url, jsGrowJob, env.grow, &DialOptions{Fingerprint: "sha-256 AB:CD"})
	require.Equal(t, 1, late.Rank())
	require.True(t, late.Late())
	require.Equal(t, 3, late.Max())
	require.Equal(t, 1, late.Size())
	require.Equal(t, &Ready{Size: 1, Kinds: []ClientKind{KindBrowser, KindBrowser}, Fingerprints: []string{"", "sha-256 AB:CD"}, Max: 3}, recvAs[*Ready](t, late))
	require.Equal(t, &Joined{Rank: 1, Kind: KindBrowser, Fingerprint: "sha-256 AB:CD"}, recvAs[*Joined](t, first))

	require.NoError(t, late.Signal(ctx, 0, SignalConnect, EncodeString("late")))
	require.Equal(t, 1, recvAs[*Signal](t, first).From)
	require.NoError(t, late.Close())
	require.Equal(t, []int{1}, recvAs[*Left](t, first).Ranks())

	last := dial(t, url, jsGrowJob, env.grow, nil)
	require.Equal(t, 2, last.Rank(), "a late rank's number is not given again")
	recvAs[*Ready](t, last)
	require.Equal(t, []int{1}, recvAs[*Left](t, last).Ranks())
	require.Equal(t, 2, recvAs[*Joined](t, first).Rank)
	_, err := Dial(ctx, url, jsGrowJob, env.grow, nil)
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	require.Equal(t, CodeJobFull, re.Code)
	require.Equal(t, "job full: 3 of 3 ranks", re.Message)
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
