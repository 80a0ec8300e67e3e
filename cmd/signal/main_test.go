//go:build !js

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/lockedbuf"
	"github.com/meshmpi/meshmpi/signaling"
)

const secret = "cmd-test-secret-0123456789"

func TestServeHandler(t *testing.T) {
	t.Setenv("MESHMPI_SIGNAL_SECRET", secret)
	t.Setenv("MESHMPI_SIGNAL_MAX_JOBS", "7")
	var logs lockedbuf.Buffer // the server logs from its own goroutines
	sc, err := parseServe([]string{"-log-format", "json", "-ice", "stun:127.0.0.1:3478"}, &logs)
	require.NoError(t, err)
	require.Equal(t, 7, sc.sig.MaxJobs)
	// a frozen rank is gone for `signal serve` as soon as for the package's server
	require.Equal(t, signaling.DefaultPingInterval, sc.sig.PingInterval)
	require.Equal(t, signaling.DefaultPingTimeout, sc.sig.PingTimeout)
	srv, err := signaling.NewServer(sc.sig)
	require.NoError(t, err)
	hs := httptest.NewServer(newHandler(srv, newRegistry(srv, nil, nil), nil, nil))
	defer hs.Close()
	defer srv.Close()

	get := func(path string) string {
		resp, err := http.Get(hs.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(body)
	}
	require.Equal(t, "ok\n", get("/healthz"))

	// A token from the token command joins through the handler.
	var out bytes.Buffer
	require.NoError(t, run([]string{"token", "-job", "j", "-size", "1", "-ttl", "1m"}, &out, io.Discard))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := signaling.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws", "j", strings.TrimSpace(out.String()), nil)
	require.NoError(t, err)
	require.Equal(t, "stun:127.0.0.1:3478", c.Welcome().ICEServers[0].URLs[0])
	metrics := get("/metrics")
	require.NoError(t, c.Close())
	require.Contains(t, metrics, "meshmpi_signal_joins_total 1")
	require.Contains(t, metrics, "meshmpi_signal_ranks 1")
	require.Contains(t, metrics, "meshmpi_signal_departures_total 0")
	require.Contains(t, metrics, "meshmpi_signal_declared_failed_total 0")
	require.Contains(t, metrics, "meshmpi_signal_late_joins_total 0")
	require.Contains(t, metrics, "go_goroutines")
	require.Contains(t, logs.String(), `"msg":"rank joined"`)
	http.DefaultClient.CloseIdleConnections()
}

func TestFlagErrors(t *testing.T) {
	t.Setenv("MESHMPI_SIGNAL_SECRET", "")
	require.ErrorContains(t, run([]string{"serve"}, io.Discard, io.Discard), "secret is required")
	require.ErrorContains(t, run([]string{"token", "-job", "j", "-size", "2"}, io.Discard, io.Discard), "secret is required")
	require.Error(t, run([]string{"token", "-secret", secret, "-job", "j", "-size", "0"}, io.Discard, io.Discard))
	require.Error(t, run([]string{"bogus"}, io.Discard, io.Discard))
	t.Setenv("MESHMPI_SIGNAL_RATE", "fast")
	require.ErrorContains(t, run([]string{"serve", "-secret", secret}, io.Discard, io.Discard), "-rate")
}

// The token command prints a job's seat tokens by default, one seat's with
// -rank, and an open token only when asked (-open).
func TestTokenCommand(t *testing.T) {
	t.Setenv("MESHMPI_SIGNAL_SECRET", secret)
	mint := func(args ...string) []string {
		var out bytes.Buffer
		require.NoError(t, run(append([]string{"token", "-job", "j", "-size", "3"}, args...), &out, io.Discard))
		return strings.Fields(out.String())
	}
	check := func(tok string, seat *int) {
		c, err := signaling.VerifyToken([]byte(secret), tok, "j", time.Now())
		require.NoError(t, err)
		require.Equal(t, 3, c.Size)
		if seat == nil {
			require.Nil(t, c.Seat)
		} else {
			require.NotNil(t, c.Seat)
			require.Equal(t, *seat, *c.Seat)
		}
	}
	toks := mint()
	require.Len(t, toks, 3)
	for r, tok := range toks {
		check(tok, &r)
	}
	one := mint("-rank", "2")
	require.Len(t, one, 1)
	two := 2
	check(one[0], &two)
	open := mint("-open")
	require.Len(t, open, 1)
	check(open[0], nil)
	require.Error(t, run([]string{"token", "-job", "j", "-size", "3", "-rank", "3"}, io.Discard, io.Discard))
	require.Error(t, run([]string{"token", "-job", "j", "-size", "3", "-rank", "1", "-open"}, io.Discard, io.Discard))
}

// -max lets a job grow: its seat tokens and its open or late token carry
// the max, and the server admits late ranks with them once the job formed
// (a late token before that is not-formed), up to max.
func TestTokenMaxCommand(t *testing.T) {
	t.Setenv("MESHMPI_SIGNAL_SECRET", secret)
	mint := func(args ...string) []string {
		t.Helper()
		var out bytes.Buffer
		require.NoError(t, run(append([]string{"token", "-job", "g", "-size", "2", "-max", "3"}, args...), &out, io.Discard))
		return strings.Fields(out.String())
	}
	seats, open, late := mint(), mint("-open"), mint("-late")
	require.Len(t, seats, 2)
	for _, tok := range append(append(seats, open...), late...) {
		c, err := signaling.VerifyToken([]byte(secret), tok, "g", time.Now())
		require.NoError(t, err)
		require.Equal(t, 2, c.Size)
		require.Equal(t, 3, c.Max)
		require.Equal(t, 3, c.Limit())
	}
	c, err := signaling.VerifyToken([]byte(secret), late[0], "g", time.Now())
	require.NoError(t, err)
	require.True(t, c.Late)
	require.Nil(t, c.Seat)

	for _, bad := range [][]string{
		{"-size", "3", "-max", "2"}, // max below size
		{"-size", "3", "-late"},     // late without growth
		{"-size", "3", "-max", "4", "-late", "-open"},
		{"-size", "3", "-max", "4", "-late", "-rank", "0"},
	} {
		require.Error(t, run(append([]string{"token", "-job", "g"}, bad...), io.Discard, io.Discard), "%q", bad)
	}

	srv, err := signaling.NewServer(signaling.Config{Secret: []byte(secret)})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = signaling.Dial(ctx, url, "g", late[0], nil)
	require.ErrorIs(t, err, signaling.ErrNotFormed)
	var world []*signaling.Client
	for _, tok := range seats {
		c, err := signaling.Dial(ctx, url, "g", tok, nil)
		require.NoError(t, err)
		defer c.Close()
		world = append(world, c)
	}
	l, err := signaling.Dial(ctx, url, "g", late[0], nil)
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, 2, l.Rank())
	require.True(t, l.Late())
	require.Equal(t, 3, l.Max())
	_, err = signaling.Dial(ctx, url, "g", open[0], nil)
	var re *signaling.RemoteError
	require.ErrorAs(t, err, &re)
	require.Equal(t, signaling.CodeJobFull, re.Code)
	require.Equal(t, "job full: 3 of 3 ranks", re.Message)
}

// -url prints each token as a join URL: the server's websocket URL with
// the job and the token in its query, as meshrun join takes it.
func TestTokenJoinURL(t *testing.T) {
	t.Setenv("MESHMPI_SIGNAL_SECRET", secret)
	var out bytes.Buffer
	require.NoError(t, run([]string{"token", "-job", "g", "-size", "2", "-max", "4", "-late", "-url", "ws://h:8080/ws"}, &out, io.Discard))
	lines := strings.Fields(out.String())
	require.Len(t, lines, 1)
	u, err := neturl.Parse(lines[0])
	require.NoError(t, err)
	require.Equal(t, "ws://h:8080/ws", u.Scheme+"://"+u.Host+u.Path)
	require.Equal(t, "g", u.Query().Get("job"))
	c, err := signaling.VerifyToken([]byte(secret), u.Query().Get("token"), "g", time.Now())
	require.NoError(t, err)
	require.True(t, c.Late)

	out.Reset()
	require.NoError(t, run([]string{"token", "-job", "g", "-size", "2", "-url", "wss://h/ws"}, &out, io.Discard))
	require.Len(t, strings.Fields(out.String()), 2, "a join URL per seat token")
	for _, bad := range []string{"http://h/ws", "ws://h/ws?job=x", "h:8080"} {
		require.ErrorContains(t, run([]string{"token", "-job", "g", "-size", "2", "-url", bad}, io.Discard, io.Discard), "-url", bad)
	}
}
