//go:build unix

package browsertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A browser that starts but never answers its DevTools pipe (as one
// chromium in many did on a loaded CI machine) does not hang Launch: each
// start is killed at the limit, Launch starts it startAttempts times and
// then fails saying why.
func TestLaunchBrowserThatDoesNotAnswer(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	fake := filepath.Join(dir, "chromium")
	// a "browser" that notes its start and then sleeps with the pipe open
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho start >> "+starts+"\nexec sleep 600\n"), 0o755))
	t.Setenv(EnvChromium, fake)
	defer func(d time.Duration) { startLimit = d }(startLimit)
	startLimit = 500 * time.Millisecond

	ctx, cancel, err := Launch(context.Background())
	if err == nil {
		cancel()
		t.Fatal("Launch of a browser that never answers succeeded")
	}
	require.Nil(t, ctx)
	require.True(t, errors.Is(err, errNoAnswer), "%v", err)
	require.Contains(t, err.Error(), "no answer from the browser within 500ms")
	b, rerr := os.ReadFile(starts)
	require.NoError(t, rerr)
	require.Equal(t, startAttempts, strings.Count(string(b), "start"), "starts of the browser")
}

// within returns what do returns when do ends in time, and otherwise
// aborts do and says so.
func TestWithin(t *testing.T) {
	want := errors.New("done")
	require.Equal(t, want, within(time.Hour, func() { t.Error("aborted") }, func() error { return want }))

	stop := make(chan struct{})
	aborted := false
	err := within(time.Millisecond, func() { aborted = true; close(stop) }, func() error { <-stop; return want })
	require.True(t, aborted)
	require.ErrorIs(t, err, errNoAnswer)
}
