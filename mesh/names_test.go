//go:build !js && !wasip1

package mesh

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/signaling"
)

// TestNames: the name service through the mesh. Lookups that give up
// stay parked at the server, so later lookups of the same service take
// their answer instead of parking more: many more than the server's
// limit of waiting lookups do not exhaust it.
func TestNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j := startFailJob(t, ctx, 2)
	a, b := j.ms[0].m, j.ms[1].m
	for range 2 * signaling.MaxWaitingLookups {
		short, stop := context.WithTimeout(ctx, time.Millisecond)
		_, err := b.Lookup(short, "svc")
		stop()
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	got := make(chan error, 1)
	go func() {
		port, err := b.Lookup(ctx, "svc")
		if err == nil && port != "p1" {
			err = context.Canceled
		}
		got <- err
	}()
	require.NoError(t, a.Publish(ctx, "svc", "p1"))
	require.NoError(t, <-got)
	require.ErrorIs(t, a.Publish(ctx, "svc", "p2"), signaling.ErrNameTaken)
	port, err := b.Lookup(ctx, "svc")
	require.NoError(t, err)
	require.Equal(t, "p1", port)
	require.NoError(t, b.Unpublish(ctx, "svc"))
	require.ErrorIs(t, b.Unpublish(ctx, "svc"), signaling.ErrNameUnknown)
}
