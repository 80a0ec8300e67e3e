//go:build !js && !wasip1

package meshmpi

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A rank whose job ended other than by Finalize fails its later calls
// with why, as its pending ones fail: another rank's abort (ErrProcFailed,
// the *AbortError), or its own Abort. It never finalized, so "rank
// finalized" (ErrComm) would be wrong: CI saw a native rank whose receive
// was posted just after the abort's notice reached it say so, in
// internal/mixedjob's TestAbortFromBrowser.
func TestCallsAfterAbortSayWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("a WebRTC job in -short mode")
	}
	spec := localJobs(t, nil)(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	var sessions [2]*Session
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := Join(ctx, spec)
			if err == nil {
				sessions[s.World().Rank()] = s
			}
			errs <- err
		}()
	}
	joinErrs := []error{<-errs, <-errs}
	for _, s := range sessions {
		if s != nil {
			defer s.Abort(nil) // a session whose partner failed to join ends too
		}
	}
	require.NoError(t, errors.Join(joinErrs...))
	aborted, other := sessions[1], sessions[0]

	// the server's notice that rank 0 called Abort(5), as it reaches rank 1
	aborted.jobAborted(0, 5, "called Abort(5) at elsewhere.go:12")
	for _, call := range []struct {
		name string
		do   func(w *Comm) error
	}{
		{"Recv", func(w *Comm) error { _, err := Recv(w, make([]byte, 1), AnySource, 0); return err }},
		{"Send", func(w *Comm) error { return Send(w, []byte{1}, 0, 0) }},
		{"Barrier", func(w *Comm) error { return Barrier(w) }},
		{"Dup", func(w *Comm) error { _, err := w.Dup(); return err }},
	} {
		err := call.do(aborted.World())
		require.ErrorIs(t, err, ErrProcFailed, "%s after another rank's abort", call.name)
		var ae *AbortError
		require.True(t, errors.As(err, &ae), "%s: %v", call.name, err)
		require.Equal(t, 0, ae.Rank)
		require.Equal(t, 5, ae.Code)
		require.NotContains(t, err.Error(), "finalized", call.name)
	}

	// this rank's own Abort
	other.Abort(errors.New("the program gave up"))
	err := Barrier(other.World())
	require.ErrorIs(t, err, ErrProcFailed)
	require.ErrorContains(t, err, "rank aborted")
	require.ErrorContains(t, err, "the program gave up")
	require.NotContains(t, err.Error(), "finalized")
}
