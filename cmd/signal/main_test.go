//go:build !js

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
	srv, err := signaling.NewServer(sc.sig)
	require.NoError(t, err)
	hs := httptest.NewServer(newHandler(srv, newRegistry(srv), nil))
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
	require.NoError(t, c.Close())

	metrics := get("/metrics")
	require.Contains(t, metrics, "meshmpi_signal_joins_total 1")
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
