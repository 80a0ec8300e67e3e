package meshmpi

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A deliberate deadlock under a Run timeout: the error names every
// rank's blocking call, with its peer and tag, a collective's algorithm,
// step and the ranks it waits for, and calls it a deadlock; the world
// ends instead of hanging.
func TestRunTimeoutReportsHang(t *testing.T) {
	err := Run(4, func(w *Comm) error {
		buf := make([]int64, 2)
		switch w.Rank() {
		case 0, 1: // each waits for the other: a classic deadlock
			_, err := Recv(w, buf, 1-w.Rank(), 7)
			return err
		case 2: // a collective rank 3 never joins
			return Allreduce(w, []int64{1, 2}, buf, Sum)
		default: // rank 3 returns early: its finalize waits for the others
			return nil
		}
	}, WithTimeout(5*time.Second)) // long enough for every rank to reach its blocking call on a loaded machine
	require.ErrorIs(t, err, ErrTimeout)
	msg := err.Error()
	t.Log(msg)
	require.Contains(t, msg, "rank 0: Recv(from rank 1, tag 7) on world: waiting for a message from rank 1")
	require.Contains(t, msg, "rank 1: Recv(from rank 0, tag 7) on world: waiting for a message from rank 0")
	require.Regexp(t, `rank 2: Allreduce \(\w+\) on world, step \d+ of \d+: waiting for a message from rank`, msg)
	require.Contains(t, msg, "rank 3: Finalize or a communicator constructor on world")
	require.Contains(t, msg, "a deadlock")
}

// A Bcast that a rank never calls: the root returned from it at once
// (its token from rank 1 trails), and its Finalize waits for that token;
// the report says so, and rank 1 waits in Finalize's barrier.
func TestRunTimeoutReportsTrailInFinalize(t *testing.T) {
	err := Run(2, func(w *Comm) error {
		if w.Rank() == 0 {
			return Bcast(w, []int64{1}, 0)
		}
		return nil
	}, WithTimeout(5*time.Second))
	require.ErrorIs(t, err, ErrTimeout)
	msg := err.Error()
	t.Log(msg)
	require.Regexp(t, `rank 0: Finalize: bcast \(\w+\) on world, step \d+ of \d+: waiting for a message from rank 1`, msg)
	require.Contains(t, msg, "rank 1: Finalize or a communicator constructor on world")
	require.Contains(t, msg, "a deadlock")
}

// An agreement a rank never joins: the report gives the waiting rank's
// side of it (the tree and whom it heard from).
func TestRunTimeoutReportsAgree(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	err := Run(3, func(w *Comm) error {
		if w.Rank() == 2 {
			<-stop // never agrees
			return nil
		}
		_, err := w.Agree(1)
		return err
	}, WithTimeout(2*time.Second))
	require.ErrorIs(t, err, ErrTimeout)
	msg := err.Error()
	t.Log(msg)
	require.Regexp(t, `rank 0: Agree on world: member 0 of 3, coordinator 0, next 1, pending 1\n    agreement 0: entered true decided false .* heard from 1 \(for 0, 1 members\)\n`, msg)
	require.Regexp(t, `rank 1: Agree on world: member 1 of 3, coordinator 0, next 1, pending 1, parent 0\n    agreement 0: entered true`, msg)
	require.Contains(t, msg, "rank 2: running, not blocked in meshmpi")
}

// A rank that computes forever is not called deadlocked.
func TestRunTimeoutRunningRank(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	err := Run(2, func(w *Comm) error {
		if w.Rank() == 0 {
			<-stop // busy in the program, not in meshmpi
			return nil
		}
		_, err := Recv(w, make([]byte, 1), 0, 0)
		return err
	}, WithTimeout(time.Second))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
	require.Contains(t, err.Error(), "rank 0: running, not blocked in meshmpi")
	require.NotContains(t, err.Error(), "deadlock")
}
