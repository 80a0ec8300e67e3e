//go:build !js && !wasip1

package host_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/wasm"
	"github.com/meshmpi/meshmpi/wasm/host"
	"github.com/meshmpi/meshmpi/wasm/internal/hosttest"
)

// TestRelayReports: the host asks its guest for reports only once the
// guest said report-ready (a guest built before the report messages
// never does, and stays not asked), and not after it left.
func TestRelayReports(t *testing.T) {
	leaktest.Check(t)
	var key [wasm.KeyLen]byte
	job := hosttest.Job(t, 1)
	hostEnd, guestEnd := net.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var q host.Reports
	require.False(t, q.Ask(), "no guest yet")
	done := make(chan error, 1)
	go func() { done <- host.Serve(ctx, hostEnd, host.Config{Job: job, Key: key, Reports: &q}) }()
	rd := joinAsGuest(t, guestEnd, key)

	// joined, but it has not said it answers: an old guest
	require.False(t, q.Ask())
	_, err := guestEnd.Write(wasm.AppendReportReady(nil))
	require.NoError(t, err)
	require.Eventually(t, q.Ask, 10*time.Second, time.Millisecond)
	m, err := rd.Next()
	require.NoError(t, err)
	require.Equal(t, wasm.MsgReport, m.Type)
	require.True(t, q.Ask())
	m, err = rd.Next()
	require.NoError(t, err)
	require.Equal(t, wasm.MsgReport, m.Type)

	guestEnd.Close() // the guest left
	require.NoError(t, <-done)
	require.False(t, q.Ask(), "a guest that left")
}
