package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var errKilled = errors.New("killed by the test")

// kill makes the rank behind c fail as a crashed process would: its
// links drop, its pending and later operations fail.
func kill(c *Comm) { c.p.ep.Close(fmt.Errorf("%w: %w", errKilled, ErrProcFailed)) }

// waitFailed blocks until c's rank knows world rank w failed.
func waitFailed(t *testing.T, c *Comm, w int) {
	for {
		notice := *c.p.fail.notice.Load()
		if c.p.isFailed(w) {
			return
		}
		select {
		case <-notice:
		case <-time.After(time.Minute):
			t.Errorf("rank %d never learned that rank %d failed", c.Rank(), w)
			return
		}
	}
}

// A failed rank does not end a KeepGoing world: point-to-point between
// the survivors goes on, collectives on a communicator with the failed
// member fail on every survivor, Shrink makes a working communicator of
// the survivors, and Run reports the failed rank only.
func TestKeepGoingSurvivorsRecover(t *testing.T) {
	const n = 5
	err := Run(n, func(world *Comm) error {
		me := world.Rank()
		if me == 3 {
			return errors.New("rank 3 gives up")
		}
		waitFailed(t, world, 3)
		// point-to-point with live ranks keeps working
		next, prev := (me+1)%n, (me+n-1)%n
		if next == 3 {
			next = 4
		}
		if prev == 3 {
			prev = 2
		}
		got := make([]int, 1)
		if _, err := Sendrecv(world, []int{me}, next, 7, got, prev, 7); err != nil {
			return err
		}
		if got[0] != prev {
			return fmt.Errorf("got %d from %d", got[0], prev)
		}
		// a collective on the world cannot complete
		if err := Barrier(world); !errors.Is(err, ErrProcFailed) {
			return fmt.Errorf("barrier with a failed member: %v", err)
		}
		if err := Send(world, []int{1}, 3, 0); !errors.Is(err, ErrProcFailed) {
			return fmt.Errorf("send to the failed rank: %v", err)
		}
		failed, err := world.GetFailed()
		if err != nil || failed.Size() != 1 {
			return fmt.Errorf("get failed: %v %v", failed, err)
		}
		small, err := world.Shrink()
		if err != nil {
			return err
		}
		if small.Size() != n-1 {
			return fmt.Errorf("shrunk to %d ranks", small.Size())
		}
		sum := make([]int, 1)
		if err := Allreduce(small, []int{me}, sum, Sum); err != nil {
			return err
		}
		if sum[0] != 0+1+2+4 {
			return fmt.Errorf("sum %d", sum[0])
		}
		return small.Free()
	}, KeepGoing())
	require.Error(t, err)
	require.Contains(t, err.Error(), "rank 3: rank 3 gives up")
	for _, r := range []string{"rank 0:", "rank 1:", "rank 2:", "rank 4:"} {
		require.NotContains(t, err.Error(), r)
	}
}

// An AnySource receive is interrupted by a failure nobody acknowledged:
// a nonblocking one stays active (ErrProcFailedPending) and completes
// after AckFailed; a blocking one fails. Specific receives from live
// ranks are not disturbed.
func TestAnySourcePending(t *testing.T) {
	err := Run(3, func(world *Comm) error {
		switch world.Rank() {
		case 2:
			return errors.New("down")
		case 1:
			// wait until rank 0 saw the interruption and acknowledged
			if _, err := Recv(world, make([]int, 1), 0, 1); err != nil {
				return err
			}
			return Send(world, []int{42}, 0, 5)
		}
		got := make([]int, 1)
		r, err := Irecv(world, got, AnySource, 5)
		if err != nil {
			return err
		}
		_, err = r.Wait(context.Background())
		if !errors.Is(err, ErrProcFailedPending) || !errors.Is(err, ErrProcFailed) {
			return fmt.Errorf("wait: %v", err)
		}
		if r.State() != Active {
			return fmt.Errorf("the interrupted receive is %v", r.State())
		}
		if _, _, err := r.Test(); !errors.Is(err, ErrProcFailedPending) {
			return fmt.Errorf("test: %v", err)
		}
		if _, err := Recv(world, make([]int, 1), AnySource, 6); !errors.Is(err, ErrProcFailed) {
			return fmt.Errorf("blocking AnySource receive: %v", err)
		}
		if _, _, err := world.Iprobe(AnySource, 5); !errors.Is(err, ErrProcFailedPending) {
			return fmt.Errorf("iprobe: %v", err)
		}
		if n, err := world.AckFailed(10); n != 1 || err != nil {
			return fmt.Errorf("ack failed: %d %v", n, err)
		}
		acked, _ := world.FailureGetAcked()
		if acked.Size() != 1 {
			return fmt.Errorf("acked %d", acked.Size())
		}
		if err := Send(world, []int{0}, 1, 1); err != nil {
			return err
		}
		st, err := r.Wait(context.Background())
		if err != nil || got[0] != 42 || st.Source != 1 {
			return fmt.Errorf("after ack: %v %v %v", got, st, err)
		}
		return nil
	}, KeepGoing())
	require.Error(t, err)
	require.NotContains(t, err.Error(), "rank 0:")
	require.NotContains(t, err.Error(), "rank 1:")
}

// Revoke reaches every rank: their pending operations on the communicator
// fail with ErrRevoked (a receive nobody will send to, a collective
// waiting for a rank that never comes), later ones too, and the recovery
// calls still work on it.
func TestRevoke(t *testing.T) {
	const n = 4
	require.NoError(t, Run(n, func(world *Comm) error {
		c, err := world.Dup()
		if err != nil {
			return err
		}
		switch world.Rank() {
		case 0:
			if err := c.Revoke(); err != nil {
				return err
			}
		case 1:
			// a collective rank 0 never calls
			if err := Barrier(c); !errors.Is(err, ErrRevoked) {
				return fmt.Errorf("barrier: %v", err)
			}
		default:
			if _, err := Recv(c, make([]int, 1), AnySource, AnyTag); !errors.Is(err, ErrRevoked) {
				return fmt.Errorf("receive: %v", err)
			}
		}
		if !c.IsRevoked() {
			return errors.New("not revoked")
		}
		if err := Send(c, []int{1}, (c.Rank()+1)%n, 0); !errors.Is(err, ErrRevoked) {
			return fmt.Errorf("send after revoke: %v", err)
		}
		if err := Barrier(c); !errors.Is(err, ErrRevoked) {
			return fmt.Errorf("barrier after revoke: %v", err)
		}
		if _, err := c.Dup(); !errors.Is(err, ErrRevoked) {
			return fmt.Errorf("dup after revoke: %v", err)
		}
		v, err := c.Agree(0b110 | c.Rank()&1)
		if err != nil || v != 0b110 {
			return fmt.Errorf("agree on a revoked communicator: %b %v", v, err)
		}
		s, err := c.Shrink()
		if err != nil {
			return err
		}
		if s.Size() != n {
			return fmt.Errorf("shrink of a revoked communicator without failures: %d ranks", s.Size())
		}
		if err := Barrier(s); err != nil {
			return err
		}
		return errors.Join(s.Free(), c.Free())
	}))
}

// A revoked world still finalizes (the survivors' barrier is an
// agreement, which a revocation leaves working).
func TestFinalizeRevokedWorld(t *testing.T) {
	require.NoError(t, Run(3, func(world *Comm) error {
		if world.Rank() == 1 {
			return world.Revoke()
		}
		if _, err := Recv(world, make([]int, 1), 1, 0); !errors.Is(err, ErrRevoked) {
			return fmt.Errorf("receive on a world being revoked: %v", err)
		}
		return nil
	}))
}

// Agree returns the AND of the flags; a failure nobody acknowledged makes
// it fail on every survivor with the same value, and once everyone
// acknowledged it, it does not.
func TestAgree(t *testing.T) {
	require.NoError(t, Run(4, func(world *Comm) error {
		v, err := world.Agree(^(1 << world.Rank()))
		if err != nil || v != ^0b1111 {
			return fmt.Errorf("agree: %b %v", v, err)
		}
		f := 1 << 40
		r, err := world.Iagree(&f)
		if err != nil {
			return err
		}
		if _, err := r.Wait(context.Background()); err != nil || f != 1<<40 {
			return fmt.Errorf("iagree: %d %v", f, err)
		}
		return nil
	}))
	err := Run(4, func(world *Comm) error {
		if world.Rank() == 1 {
			return errors.New("down")
		}
		waitFailed(t, world, 1)
		v, err := world.Agree(1)
		if !errors.Is(err, ErrProcFailed) || v != 1 {
			return fmt.Errorf("agree with an unacknowledged failure: %d %v", v, err)
		}
		if _, err := world.AckFailed(1); err != nil {
			return err
		}
		v, err = world.Agree(3 - world.Rank()%2)
		if err != nil || v != 2 {
			return fmt.Errorf("agree after ack: %d %v", v, err)
		}
		return nil
	}, KeepGoing())
	require.Error(t, err)
	require.Equal(t, "rank 1: down", err.Error())
}

func TestFTArguments(t *testing.T) {
	require.NoError(t, Run(2, func(world *Comm) error {
		if _, err := world.AckFailed(-1); !errors.Is(err, ErrArg) {
			return fmt.Errorf("negative ack: %v", err)
		}
		if _, err := world.Iagree(nil); !errors.Is(err, ErrArg) {
			return fmt.Errorf("nil flag: %v", err)
		}
		var nilComm *Comm
		if err := nilComm.Revoke(); !errors.Is(err, ErrComm) {
			return fmt.Errorf("revoke nil: %v", err)
		}
		if _, err := nilComm.Shrink(); !errors.Is(err, ErrComm) {
			return fmt.Errorf("shrink nil: %v", err)
		}
		f := 1
		r, err := world.Iagree(&f)
		if err != nil {
			return err
		}
		if err := r.Free(); !errors.Is(err, ErrRequest) {
			return fmt.Errorf("free an active agreement: %v", err)
		}
		if err := r.Cancel(); !errors.Is(err, ErrRequest) {
			return fmt.Errorf("cancel an agreement: %v", err)
		}
		if _, err := r.Wait(context.Background()); err != nil {
			return err
		}
		return nil
	}))
}

// faultRuns is how many random kill schedules TestKillDuringAgreeAndShrink
// runs; MESHMPI_FAULT_RUNS raises it (the 1,000-run bar).
func faultRuns(def int) int {
	if n, err := strconv.Atoi(os.Getenv("MESHMPI_FAULT_RUNS")); err == nil && n > 0 {
		return n
	}
	return def
}

// Ranks killed at random moments while every rank runs rounds of Revoke,
// Agree and Shrink: no survivor hangs, every survivor of one Agree returns the
// same value, and every survivor of one Shrink holds the same group.
func TestKillDuringAgreeAndShrink(t *testing.T) {
	runs := faultRuns(60)
	if testing.Short() {
		runs = 20
	}
	for run := range runs {
		seed := uint64(run)
		rng := rand.New(rand.NewPCG(seed, 1))
		n := 2 + rng.IntN(7)
		kills := rng.IntN(n) // up to all but one
		t.Run(fmt.Sprintf("run%d_n%d_kills%d", run, n, kills), func(t *testing.T) {
			t.Parallel()
			killRandomly(t, seed, n, kills)
		})
	}
}

func killRandomly(t *testing.T, seed uint64, n, kills int) {
	const rounds = 6
	rng := rand.New(rand.NewPCG(seed, 2))
	victims := rng.Perm(n)[:kills]
	delays := make([]time.Duration, kills)
	for i := range delays {
		delays[i] = time.Duration(rng.IntN(3000)) * time.Microsecond
	}
	revoker := make([]int, rounds) // the rank of each round's communicator that revokes it, -1 for none
	for k := range revoker {
		revoker[k] = -1
		if rng.IntN(3) == 0 {
			revoker[k] = rng.IntN(n)
		}
	}
	flags := make([][]int, n)
	for r := range flags {
		for range rounds {
			flags[r] = append(flags[r], int(rng.Uint64()|rng.Uint64()))
		}
	}
	type outcome struct {
		agreed []int   // per round, the agreed flag
		groups [][]int // per round, the world ranks of the shrunk communicator
		errs   []bool  // per round, whether Agree reported a failure
	}
	outcomes := make([]outcome, n)
	current := make([]atomic.Pointer[Comm], n)
	var started sync.WaitGroup
	started.Add(n)
	worlds := make([]*Comm, n)
	go func() {
		started.Wait()
		for i, v := range victims {
			time.Sleep(delays[i])
			kill(worlds[v])
		}
	}()
	// a hang shows each rank's agreement state before the timeout ends it
	dump := time.AfterFunc(50*time.Second, func() {
		for r := range n {
			if c := current[r].Load(); c != nil {
				t.Logf("rank %d: comm %d: %s", r, c.id, c.agree)
			}
		}
	})
	defer dump.Stop()
	err := Run(n, func(world *Comm) error {
		me := world.Rank()
		worlds[me] = world
		started.Done()
		c := world
		for k := range rounds {
			current[me].Store(c)
			if revoker[k] >= 0 {
				// the others wait in a receive only the revocation ends
				// (or a failure nobody acknowledged, if the revoker dies)
				if c.Rank() == revoker[k]%c.Size() {
					if err := c.Revoke(); err != nil && !slices.Contains(victims, me) {
						return fmt.Errorf("round %d: revoke: %w", k, err)
					}
				} else if _, err := Recv(c, make([]int, 1), AnySource, 99); !errors.Is(err, ErrRevoked) && !errors.Is(err, ErrProcFailed) {
					return fmt.Errorf("round %d: receive on a communicator being revoked: %v", k, err)
				}
			}
			v, err := c.Agree(flags[me][k])
			switch {
			case errors.Is(err, errKilled) || slices.Contains(victims, me) && err != nil:
				return err
			case err != nil && !errors.Is(err, ErrProcFailed):
				return fmt.Errorf("round %d: agree: %w", k, err)
			}
			outcomes[me].agreed = append(outcomes[me].agreed, v)
			outcomes[me].errs = append(outcomes[me].errs, err != nil)
			s, err := c.Shrink()
			if err != nil {
				if slices.Contains(victims, me) {
					return err
				}
				return fmt.Errorf("round %d: shrink: %w", k, err)
			}
			outcomes[me].groups = append(outcomes[me].groups, slices.Clone(s.ranks))
			if c != world {
				_ = c.Free()
			}
			c = s
		}
		return nil
	}, KeepGoing(), WithTimeout(time.Minute))
	var survivors []int
	for r := range n {
		if !slices.Contains(victims, r) {
			survivors = append(survivors, r)
		}
	}
	if err != nil {
		// only the victims may fail
		for _, r := range survivors {
			require.NotContains(t, err.Error(), fmt.Sprintf("rank %d:", r))
		}
		require.NotErrorIs(t, err, ErrTimeout)
	}
	first := outcomes[survivors[0]]
	require.Len(t, first.agreed, rounds)
	for _, r := range survivors[1:] {
		o := outcomes[r]
		require.Equal(t, first.agreed, o.agreed, "ranks %d and %d disagree on Agree", survivors[0], r)
		require.Equal(t, first.errs, o.errs, "ranks %d and %d disagree on Agree's error", survivors[0], r)
		require.Equal(t, first.groups, o.groups, "ranks %d and %d hold different Shrink groups", survivors[0], r)
	}
	// every survivor is in every group; the value includes every survivor's flag
	for k := range rounds {
		for _, r := range survivors {
			require.Contains(t, first.groups[k], r)
			require.Equal(t, first.agreed[k], first.agreed[k]&flags[r][k])
		}
	}
}

// Ranks killed at random moments while one group accepts and another
// connects, then merges: no survivor hangs, every error a survivor gets
// is a failure's, and the ranks whose merge succeeded hold the same
// group.
func TestKillDuringAcceptConnect(t *testing.T) {
	runs := faultRuns(60)
	if testing.Short() {
		runs = 20
	}
	for run := range runs {
		seed := uint64(run)
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 2 + rng.IntN(7)
		kills := rng.IntN(n)
		t.Run(fmt.Sprintf("run%d_n%d_kills%d", run, n, kills), func(t *testing.T) {
			t.Parallel()
			killDuringConnect(t, seed, n, kills)
		})
	}
}

func killDuringConnect(t *testing.T, seed uint64, n, kills int) {
	rng := rand.New(rand.NewPCG(seed, 4))
	victims := rng.Perm(n)[:kills]
	delays := make([]time.Duration, kills)
	for i := range delays {
		delays[i] = time.Duration(rng.IntN(2000)) * time.Microsecond
	}
	a := 1 + rng.IntN(n-1) // ranks 0…a-1 accept, a…n-1 connect
	groups := make([][]int, n)
	var started sync.WaitGroup
	started.Add(n)
	worlds := make([]*Comm, n)
	go func() {
		started.Wait()
		for i, v := range victims {
			time.Sleep(delays[i])
			kill(worlds[v])
		}
	}()
	allowed := func(err error) bool {
		return errors.Is(err, ErrProcFailed) || errors.Is(err, ErrRevoked) || errors.Is(err, errKilled) || errors.Is(err, ErrPort)
	}
	t.Logf("acceptors 0…%d, connectors %d…%d, victims %v", a-1, a, n-1, victims)
	err := Run(n, func(world *Comm) error {
		me := world.Rank()
		worlds[me] = world
		side, err := world.Split(min(me/a, 1), me)
		started.Done()
		if err != nil {
			return nil // a kill came first: nothing to connect
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var inter *Comm
		if me < a {
			var port string
			if side.Rank() == 0 {
				if port, err = side.OpenPort(); err == nil {
					err = side.PublishName("kill", port)
				}
				if err != nil {
					return fmt.Errorf("port: %w", err)
				}
				// Accept waits for a connect as long as it takes: when a
				// connector fails, the connect may never come, so the
				// port closes (as a program gives up on its own terms)
				done := make(chan struct{})
				defer close(done)
				// and once Accept is over, whatever it gave: a connect
				// still waiting is refused
				defer side.ClosePort(port)
				go func() {
					p := world.p
					for {
						notice := *p.fail.notice.Load()
						for w := a; w < n; w++ {
							if p.isFailed(w) {
								_ = side.ClosePort(port)
								return
							}
						}
						select {
						case <-notice:
						case <-done:
							return
						}
					}
				}()
			}
			inter, err = side.Accept(port, 0)
		} else {
			var port string
			if side.Rank() == 0 {
				// the acceptors' leader may be dead before it publishes
				if port, err = side.LookupName(ctx, "kill"); err != nil {
					port = "meshmpi-port:0:1"
				}
			}
			inter, err = side.Connect(port, 0)
		}
		if err != nil {
			if allowed(err) {
				return nil
			}
			return fmt.Errorf("accept/connect: %w", err)
		}
		merged, err := inter.IntercommMerge(me >= a)
		if err != nil {
			if allowed(err) {
				return nil
			}
			return fmt.Errorf("merge: %w", err)
		}
		groups[me] = slices.Clone(merged.ranks)
		return nil
	}, KeepGoing(), WithTimeout(time.Minute))
	if err != nil {
		for r := range n {
			if !slices.Contains(victims, r) {
				require.NotContains(t, err.Error(), fmt.Sprintf("rank %d:", r))
			}
		}
		require.NotErrorIs(t, err, ErrTimeout)
	}
	var want []int
	for r := range n {
		if groups[r] == nil || slices.Contains(victims, r) {
			continue
		}
		if want == nil {
			want = groups[r]
		}
		require.Equal(t, want, groups[r], "rank %d holds another merged group", r)
	}
	t.Logf("acceptors %d, connectors %d, killed %v: merged %v", a, n-a, victims, want)
}
