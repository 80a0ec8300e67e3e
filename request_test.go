package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Misuse of a request is ErrRequest, in every state where MPI forbids it.
func TestRequestMisuse(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		other := 1 - w.Rank()
		buf := []int{0}
		var errs []error
		check := func(what string, err error) { errs = append(errs, expectErr(err, ErrRequest, what)) }

		// persistent receive: started twice, freed while active
		pr, err := RecvInit(w, buf, other, 1)
		if err != nil {
			return err
		}
		if err := pr.Start(); err != nil {
			return err
		}
		check("start an active request", pr.Start())
		check("startall with an active request", Startall([]*Request{pr}))
		if err := Send(w, []int{5}, other, 1); err != nil {
			return err
		}
		if _, err := pr.Wait(context.Background()); err != nil {
			return err
		}
		if err := pr.Free(); err != nil {
			return err
		}
		_, err = pr.Wait(context.Background())
		check("wait on a freed request", err)
		_, _, err = pr.Test()
		check("test a freed request", err)
		check("free a freed request", pr.Free())
		check("start a freed request", pr.Start())

		// nonblocking requests cannot be started
		sr, err := Isend(w, buf, other, 2)
		if err != nil {
			return err
		}
		check("start a nonblocking request", sr.Start())
		if _, err := sr.Wait(context.Background()); err != nil {
			return err
		}
		check("cancel a completed request", sr.Cancel())
		if _, err := Recv(w, buf, other, 2); err != nil {
			return err
		}

		// Startall checks every request before starting any
		a, _ := SendInit(w, buf, other, 3)
		b, _ := RecvInit(w, buf, other, 3)
		check("startall with a duplicate", Startall([]*Request{a, a}))
		check("startall with a nonblocking request", Startall([]*Request{a, sr}))
		errs = append(errs, expect(a.State() == Initialized, "startall started a request before failing: %s", a.State()))

		var nilReq *Request
		_, err = nilReq.Wait(context.Background())
		check("wait on nil", err)
		return errors.Join(append(errs, a.Free(), b.Free())...)
	})
}

func TestRequestStates(t *testing.T) {
	world(t, 1, func(w *Comm) error {
		r, err := RecvInit(w, []int{0}, 0, 0)
		if err != nil {
			return err
		}
		states := []RequestState{r.State()}
		if err := r.Start(); err != nil {
			return err
		}
		states = append(states, r.State())
		if err := Send(w, []int{1}, 0, 0); err != nil {
			return err
		}
		if _, err := r.Wait(context.Background()); err != nil {
			return err
		}
		states = append(states, r.State())
		if err := r.Start(); err != nil { // a completed persistent request starts again
			return err
		}
		states = append(states, r.State())
		if err := r.Cancel(); err != nil {
			return err
		}
		st, err := r.Wait(context.Background())
		if err != nil || !st.Cancelled {
			return fmt.Errorf("cancelled persistent receive: %+v %v", st, err)
		}
		if err := r.Free(); err != nil {
			return err
		}
		states = append(states, r.State())
		return expect(slices.Equal(states, []RequestState{Initialized, Active, Complete, Active, Freed}), "states %v", states)
	})
}

// Freeing an active nonblocking request lets it finish unobserved.
func TestFreeActiveNonblocking(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			r, err := Isend(w, fill(0, 0, 50_000), 1, 0) // rendezvous: still active
			if err != nil {
				return err
			}
			if err := r.Free(); err != nil {
				return err
			}
			_, err = Recv(w, []byte{0}, 1, 1)
			return err
		}
		got := make([]int64, 50_000)
		if _, err := Recv(w, got, 0, 0); err != nil {
			return err
		}
		if err := Send(w, []byte{1}, 0, 1); err != nil {
			return err
		}
		return expect(slices.Equal(got, fill(0, 0, 50_000)), "message from a freed send differs")
	}, protocolOpts...)
}

// Wait honours its context; the request stays active and completes later.
func TestWaitContext(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			if _, err := Recv(w, []byte{0}, 1, 1); err != nil {
				return err
			}
			return Send(w, []int{9}, 1, 0)
		}
		got := []int{0}
		r, err := Irecv(w, got, 0, 0)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := r.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) || r.State() != Active {
			return fmt.Errorf("wait with an expired context: %v, state %s", err, r.State())
		}
		if err := Send(w, []byte{1}, 0, 1); err != nil {
			return err
		}
		_, err = r.Wait(context.Background())
		return errors.Join(err, expect(got[0] == 9, "got %d", got[0]))
	})
}

// The multiple-completion calls over a mix of kinds: nonblocking and
// persistent, sends and receives, nil entries and inactive requests.
func TestMultipleCompletion(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		ctx := context.Background()
		if w.Rank() == 1 {
			// release rank 0's receives one by one, each after its go-ahead
			for i := range 4 {
				if _, err := Recv(w, []byte{0}, 0, 100); err != nil {
					return err
				}
				if err := Send(w, []int{i}, 0, i); err != nil {
					return err
				}
			}
			buf := make([]int, 1)
			for range 3 {
				if _, err := Recv(w, buf, 0, 50); err != nil {
					return err
				}
			}
			return nil
		}
		bufs := make([][]int, 4)
		reqs := make([]*Request, 6)
		for i := range 4 {
			bufs[i] = []int{-1}
			var err error
			if i%2 == 0 {
				reqs[i], err = Irecv(w, bufs[i], 1, i)
			} else {
				reqs[i], err = RecvInit(w, bufs[i], 1, i)
				if err == nil {
					err = reqs[i].Start()
				}
			}
			if err != nil {
				return err
			}
		}
		inactive, err := SendInit(w, []int{0}, 1, 50) // never started: ignored
		if err != nil {
			return err
		}
		reqs[4], reqs[5] = nil, inactive

		if idx, ok, _, err := Testany(reqs); ok || err != nil {
			return fmt.Errorf("testany before any message: %d %v %v", idx, ok, err)
		}
		if ok, err := Testall(reqs, nil); ok || err != nil {
			return fmt.Errorf("testall before any message: %v %v", ok, err)
		}
		if idx, _, err := Testsome(reqs); len(idx) != 0 || err != nil {
			return fmt.Errorf("testsome before any message: %v %v", idx, err)
		}
		done := map[int]bool{}
		// Waitany: one go-ahead, one completion
		if err := Send(w, []byte{1}, 1, 100); err != nil {
			return err
		}
		idx, st, err := Waitany(ctx, reqs)
		if err != nil || idx != 0 || st.Tag != 0 || bufs[0][0] != 0 {
			return fmt.Errorf("waitany: %d %+v %v", idx, st, err)
		}
		done[idx] = true
		// Waitsome: one more
		if err := Send(w, []byte{1}, 1, 100); err != nil {
			return err
		}
		some, sts, err := Waitsome(ctx, reqs)
		if err != nil || !slices.Equal(some, []int{1}) || sts[0].Tag != 1 {
			return fmt.Errorf("waitsome: %v %+v %v", some, sts, err)
		}
		// Waitall on the rest, including the completed ones
		for range 2 {
			if err := Send(w, []byte{1}, 1, 100); err != nil {
				return err
			}
		}
		statuses := make([]Status, len(reqs))
		if err := Waitall(ctx, reqs, statuses); err != nil {
			return err
		}
		for i := range 4 {
			// request 1, persistent, completed in Waitsome: inactive now,
			// so its status is the empty one (MPI-4.1 §3.7.3); request 0,
			// nonblocking, gives its status again
			tagOK := statuses[i].Tag == i
			if i == 1 {
				tagOK = statuses[i] == emptyStatus
			}
			if bufs[i][0] != i || !tagOK {
				return fmt.Errorf("request %d: buf %d status %+v", i, bufs[i][0], statuses[i])
			}
		}
		// no active request left: Waitany and Waitsome return at once
		if idx, _, err := Waitany(ctx, reqs); idx != Undefined || err != nil {
			return fmt.Errorf("waitany with nothing active: %d %v", idx, err)
		}
		if some, _, err := Waitsome(ctx, reqs); some != nil || err != nil {
			return fmt.Errorf("waitsome with nothing active: %v %v", some, err)
		}
		// persistent sends through Startall and Testall
		if err := Startall([]*Request{inactive, reqs[1], reqs[3]}); err != nil {
			return err
		}
		if err := Send(w, []int{0}, 1, 50); err != nil { // pairs with one of rank 1's three receives
			return err
		}
		// rank 1 sends nothing more: the restarted receives can only be cancelled
		for _, r := range []*Request{reqs[1], reqs[3]} {
			if err := r.Cancel(); err != nil {
				return err
			}
		}
		again := []*Request{inactive, reqs[1], reqs[3]}
		if err := Waitall(ctx, again, statuses); err != nil {
			return err
		}
		if !statuses[1].Cancelled || !statuses[2].Cancelled {
			return fmt.Errorf("restarted receives were not cancelled: %+v", statuses[:3])
		}
		if ok, err := Testall(again, nil); !ok || err != nil {
			return fmt.Errorf("testall over completed requests: %v %v", ok, err)
		}
		return Send(w, []int{0}, 1, 50)
	})
}

// Waitall reports each failure in its status and ErrInStatus overall.
func TestWaitallErrInStatus(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 0 {
			return errors.Join(Send(w, []int{1, 2, 3}, 1, 0), Send(w, []int{4}, 1, 1))
		}
		short, ok := make([]int, 1), make([]int, 1)
		r0, _ := Irecv(w, short, 0, 0)
		r1, _ := Irecv(w, ok, 0, 1)
		statuses := make([]Status, 2)
		err := Waitall(context.Background(), []*Request{r0, r1}, statuses)
		return errors.Join(
			expectErr(err, ErrInStatus, "waitall"),
			expectErr(err, ErrTruncate, "waitall"),
			expectErr(statuses[0].Err, ErrTruncate, "status 0"),
			expect(statuses[1].Err == nil && ok[0] == 4, "status 1: %+v", statuses[1]))
	})
}

// The message path allocates nothing: blocking eager send and receive, and
// a persistent Start+Wait cycle (here through a rank's loopback link, so
// every allocation counted is the library's).
func TestZeroAllocs(t *testing.T) {
	world(t, 1, func(w *Comm) error {
		buf, got := make([]float64, 16), make([]float64, 16)
		ctx := context.Background()
		eager := func() {
			_ = Send(w, buf, 0, 1)
			_, _ = Recv(w, got, 0, 1)
		}
		sr, err := SendInit(w, buf, 0, 2)
		if err != nil {
			return err
		}
		rr, err := RecvInit(w, got, 0, 2)
		if err != nil {
			return err
		}
		pair := []*Request{rr, sr}
		persistent := func() {
			_ = Startall(pair)
			_ = Waitall(ctx, pair, nil)
		}
		single := func() {
			_ = rr.Start()
			_ = sr.Start()
			_, _ = sr.Wait(ctx)
			_, _ = rr.Wait(ctx)
		}
		var errs []error
		for name, f := range map[string]func(){"eager send+recv": eager, "persistent startall+waitall": persistent, "persistent start+wait": single} {
			f()
			if a := testing.AllocsPerRun(1000, f); a != 0 {
				errs = append(errs, fmt.Errorf("%s: %.1f allocations per cycle", name, a))
			}
		}
		return errors.Join(errs...)
	})
}

func TestRequestStateString(t *testing.T) {
	require.Equal(t, "initialized active complete freed RequestState(9)",
		fmt.Sprint(Initialized, Active, Complete, Freed, RequestState(9)))
}
