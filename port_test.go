package meshmpi

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// grow runs the pattern a job that admits late ranks runs, in one Run
// world: ranks 0…first-1 are the job, each rank from first on arrives
// alone (its own communicator, as a late rank's world) and connects to
// the port the job published; every member of the grown communicator
// takes part in the next Accept. It returns each rank's final
// communicator.
func grow(world *Comm, first int) (*Comm, error) {
	n := world.Size()
	job := world.Rank() < first
	color := 0
	if !job {
		color = 1 + world.Rank() // alone
	}
	comm, err := world.Split(color, world.Rank())
	if err != nil {
		return nil, err
	}
	var port string
	if world.Rank() == 0 {
		if port, err = comm.OpenPort(); err != nil {
			return nil, err
		}
		if err := comm.PublishName("grow", port); err != nil {
			return nil, err
		}
	}
	if !job {
		// arrive in rank order: the job accepts one group at a time
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p, err := comm.LookupName(ctx, "grow")
		if err != nil {
			return nil, err
		}
		if world.Rank() > first {
			// the rank before goes first
			var turn [1]byte
			if _, err := Recv(world, turn[:], world.Rank()-1, 7); err != nil {
				return nil, err
			}
		}
		inter, err := comm.Connect(p, 0)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		if comm, err = inter.IntercommMerge(true); err != nil {
			return nil, err
		}
		if world.Rank()+1 < n {
			if err := Send(world, []byte{1}, world.Rank()+1, 7); err != nil {
				return nil, err
			}
		}
	}
	for comm.Size() < n {
		inter, err := comm.Accept(port, 0)
		if err != nil {
			return nil, fmt.Errorf("accept at size %d: %w", comm.Size(), err)
		}
		if comm, err = inter.IntercommMerge(false); err != nil {
			return nil, err
		}
	}
	if world.Rank() == 0 {
		if err := comm.UnpublishName("grow", port); err != nil {
			return nil, err
		}
		if err := comm.ClosePort(port); err != nil {
			return nil, err
		}
	}
	return comm, nil
}

func TestAcceptConnectGrow(t *testing.T) {
	for _, c := range []struct{ n, first int }{{2, 1}, {5, 2}, {8, 4}} {
		t.Run(fmt.Sprintf("%d-to-%d", c.first, c.n), func(t *testing.T) {
			require.NoError(t, Run(c.n, func(world *Comm) error {
				comm, err := grow(world, c.first)
				if err != nil {
					return err
				}
				// the job's ranks first, then the arrivals in order
				if comm.Rank() != world.Rank() {
					return fmt.Errorf("rank %d in the grown communicator, want %d", comm.Rank(), world.Rank())
				}
				sum := make([]int64, 1)
				if err := Allreduce(comm, []int64{int64(world.Rank() + 1)}, sum, Sum); err != nil {
					return err
				}
				if want := int64(c.n * (c.n + 1) / 2); sum[0] != want {
					return fmt.Errorf("allreduce on the grown communicator: %d, want %d", sum[0], want)
				}
				all := make([]int32, c.n)
				if err := Allgather(comm, []int32{int32(world.Rank())}, all); err != nil {
					return err
				}
				for i, v := range all {
					if v != int32(i) {
						return fmt.Errorf("allgather: %v", all)
					}
				}
				return comm.Free()
			}))
		})
	}
}

// TestAcceptConnectGroups connects two groups of several ranks with
// different roots, as MPI's connect/accept between two running jobs.
func TestAcceptConnectGroups(t *testing.T) {
	require.NoError(t, Run(7, func(world *Comm) error {
		side := 0
		if world.Rank() >= 3 {
			side = 1
		}
		local, err := world.Split(side, -world.Rank()) // reversed: roots are not world rank order
		if err != nil {
			return err
		}
		var inter *Comm
		if side == 0 {
			var port string
			if local.Rank() == 1 {
				if port, err = local.OpenPort(); err != nil {
					return err
				}
				if err := local.PublishName("groups", port); err != nil {
					return err
				}
			}
			inter, err = local.Accept(port, 1)
		} else {
			var port string
			if local.Rank() == 2 {
				if port, err = local.LookupName(context.Background(), "groups"); err != nil {
					return err
				}
			}
			inter, err = local.Connect(port, 2)
		}
		if err != nil {
			return err
		}
		if inter.RemoteSize() != 7-local.Size() {
			return fmt.Errorf("remote size %d", inter.RemoteSize())
		}
		// a message to every rank of the other group, and one from each
		for r := range inter.RemoteSize() {
			in := make([]int64, 1)
			st, err := Sendrecv(inter, []int64{int64(world.Rank())}, r, 3, in, r, 3)
			if err != nil {
				return err
			}
			g, _ := inter.RemoteGroup()
			wg, _ := world.Group()
			if w, _ := g.TranslateRanks([]int{st.Source}, wg); in[0] != int64(w[0]) {
				return fmt.Errorf("from remote rank %d: %d, want world rank %d", r, in[0], w[0])
			}
		}
		return Barrier(inter)
	}))
}

// TestPortErrors tries the calls with bad arguments: each fails with its
// class, on every rank it concerns, and nothing hangs.
func TestPortErrors(t *testing.T) {
	require.NoError(t, Run(2, func(world *Comm) error {
		self := world.Self()
		if self.Size() != 1 || self.Rank() != 0 || world.Self() != self {
			return fmt.Errorf("Self: %v", self)
		}
		if err := self.Free(); !errors.Is(err, ErrComm) {
			return fmt.Errorf("free of Self: %v", err)
		}
		check := func(what string, err, want error) error {
			if !errors.Is(err, want) {
				return fmt.Errorf("%s: %v, want %v", what, err, want)
			}
			return nil
		}
		for _, bad := range []string{"", "port", "meshmpi-port:", "meshmpi-port:9:1", "meshmpi-port:-1:1", "meshmpi-port:0:0", "meshmpi-port:0:x"} {
			_, err := self.Connect(bad, 0)
			if err := check("connect "+bad, err, ErrPort); err != nil {
				return err
			}
			_, err = self.Accept(bad, 0)
			if err := check("accept "+bad, err, ErrPort); err != nil {
				return err
			}
		}
		if _, err := self.Accept("meshmpi-port:0:1", 5); !errors.Is(err, ErrRoot) {
			return fmt.Errorf("accept with root 5: %v", err)
		}
		if _, err := world.LookupName(context.Background(), ""); !errors.Is(err, ErrName) {
			return fmt.Errorf("lookup of an empty name: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := world.LookupName(ctx, "nobody"); !errors.Is(err, ErrName) {
			return fmt.Errorf("lookup of an unpublished name: %v", err)
		}
		if err := world.UnpublishName("nobody", "meshmpi-port:0:1"); !errors.Is(err, ErrService) {
			return fmt.Errorf("unpublish of an unpublished name: %v", err)
		}
		if world.Rank() == 0 {
			port, err := self.OpenPort()
			if err != nil {
				return err
			}
			if err := world.PublishName("taken", port); err != nil {
				return err
			}
			if err := world.PublishName("taken", port); !errors.Is(err, ErrService) {
				return fmt.Errorf("second publish: %v", err)
			}
			if err := world.PublishName("bad", "not a port"); !errors.Is(err, ErrPort) {
				return fmt.Errorf("publish of a bad port: %v", err)
			}
			// a port of this process's own group
			if _, err := self.Connect(port, 0); !errors.Is(err, ErrPort) {
				return fmt.Errorf("connect to an own port: %v", err)
			}
			// closing the port wakes its Accept
			var wg sync.WaitGroup
			var aerr error
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, aerr = self.Accept(port, 0)
			}()
			time.Sleep(10 * time.Millisecond) // usually in Accept by now; either order must fail it
			if err := self.ClosePort(port); err != nil {
				return err
			}
			wg.Wait()
			if !errors.Is(aerr, ErrPort) {
				return fmt.Errorf("accept on a closed port: %v", aerr)
			}
			if err := self.ClosePort(port); !errors.Is(err, ErrPort) {
				return fmt.Errorf("second close: %v", err)
			}
			if err := Send(world, []byte(port), 1, 1); err != nil {
				return err
			}
		} else {
			// a port that is closed (or was never open) refuses at once
			buf := make([]byte, 64)
			st, err := Recv(world, buf, 0, 1)
			if err != nil {
				return err
			}
			if _, err := self.Connect(string(buf[:st.Bytes]), 0); !errors.Is(err, ErrPort) {
				return fmt.Errorf("connect to a closed port: %v", err)
			}
		}
		return nil
	}))
}

// A manager's intercommunicator with a worker that failed leaves nothing
// behind: its context id is free again (churn must not use the ids up),
// and what the worker sent and nobody received does not reach the next
// communicator that takes the id.
func TestFailedPeerIntercommIDReused(t *testing.T) {
	err := Run(3, func(world *Comm) error {
		self := world.Self()
		switch world.Rank() {
		case 0:
			port, err := self.OpenPort()
			if err != nil {
				return err
			}
			if err := world.PublishName("reuse", port); err != nil {
				return err
			}
			first, err := self.Accept(port, 0)
			if err != nil {
				return err
			}
			id := first.id
			// the worker's message on tag 5 stays unreceived; this receive
			// ends with the worker's failure
			if _, err := Recv(first, make([]int64, 1), 0, 6); !errors.Is(err, ErrProcFailed) {
				return fmt.Errorf("receive from a worker that failed: %v", err)
			}
			if err := first.Free(); err != nil {
				return err
			}
			if err := Send(world, []byte{1}, 2, 1); err != nil { // the next worker may come
				return err
			}
			second, err := self.Accept(port, 0)
			if err != nil {
				return err
			}
			if second.id != id {
				return fmt.Errorf("the second intercommunicator has context id %d, the first had %d", second.id, id)
			}
			got := make([]int64, 1)
			st, err := Recv(second, got, AnySource, AnyTag)
			if err != nil || st.Tag != 7 || got[0] != 2 {
				return fmt.Errorf("first message on the reused id: tag %d, %v (%v): want the new worker's tag 7", st.Tag, got, err)
			}
			return second.Disconnect()
		case 1:
			port, err := world.LookupName(context.Background(), "reuse")
			if err != nil {
				return err
			}
			inter, err := self.Connect(port, 0)
			if err != nil {
				return err
			}
			if err := Send(inter, []int64{1}, 0, 5); err != nil {
				return err
			}
			return errOnPurposeTest
		default:
			if _, err := Recv(world, make([]byte, 1), 0, 1); err != nil {
				return err
			}
			port, err := world.LookupName(context.Background(), "reuse")
			if err != nil {
				return err
			}
			inter, err := self.Connect(port, 0)
			if err != nil {
				return err
			}
			if err := Send(inter, []int64{2}, 0, 7); err != nil {
				return err
			}
			return inter.Disconnect()
		}
	}, KeepGoing(), WithTimeout(time.Minute))
	require.ErrorIs(t, err, errOnPurposeTest)
	require.ErrorContains(t, err, "rank 1:")
	require.NotContains(t, err.Error(), "rank 0:")
	require.NotContains(t, err.Error(), "rank 2:")
}

var errOnPurposeTest = errors.New("failing on purpose")

// An Accept waiting for a connection, and a Connect waiting for its
// Accept, leave their processes free to build other communicators
// meanwhile: the leaders meet before the context-id agreement, whose
// rounds hold the process's mask of used ids (before, the waiting
// Accept held it and every other construction of its process went
// round forever).
func TestPortWaitLetsOthersConstruct(t *testing.T) {
	err := Run(3, func(world *Comm) error {
		self := world.Self()
		var port string
		var err error
		if world.Rank() == 0 {
			if port, err = self.OpenPort(); err != nil {
				return err
			}
		}
		name := []byte(port)
		size := []int64{int64(len(name))}
		if err := Bcast(world, size, 0); err != nil {
			return err
		}
		if world.Rank() != 0 {
			name = make([]byte, size[0])
		}
		if err := Bcast(world, name, 0); err != nil {
			return err
		}
		// rank 1's port, at which nobody accepts until rank 1 closes it
		theirs := []byte(fmt.Sprintf("meshmpi-port:%d:%d", 1, 0))
		if world.Rank() == 1 {
			p, err := self.OpenPort()
			if err != nil {
				return err
			}
			theirs = []byte(p)
		}
		if err := Bcast(world, theirs, 1); err != nil {
			return err
		}
		accepted := make(chan error, 1)
		switch world.Rank() {
		case 0: // accepts in the background, and nobody connects yet
			go func() {
				inter, err := self.Accept(port, 0)
				if err == nil {
					_, err = inter.IntercommMerge(false)
				}
				accepted <- err
			}()
		case 2: // connects in the background, and nobody accepts
			go func() {
				_, err := self.Connect(string(theirs), 0)
				accepted <- err
			}()
		}
		for range 5 {
			d, err := world.Dup()
			if err != nil {
				return err
			}
			s, err := d.Split(world.Rank()%2, 0)
			if err != nil {
				return err
			}
			if err := errors.Join(s.Free(), d.Free()); err != nil {
				return err
			}
		}
		switch world.Rank() {
		case 0:
			if err := Barrier(world); err != nil {
				return err
			}
			if err := <-accepted; err != nil {
				return fmt.Errorf("accept: %w", err)
			}
		case 1: // now connect to rank 0's port, and close its own
			if err := Barrier(world); err != nil {
				return err
			}
			if err := self.ClosePort(string(theirs)); err != nil {
				return err
			}
			inter, err := self.Connect(string(name), 0)
			if err != nil {
				return fmt.Errorf("connect: %w", err)
			}
			if _, err := inter.IntercommMerge(true); err != nil {
				return err
			}
		case 2:
			if err := Barrier(world); err != nil {
				return err
			}
			if err := <-accepted; !errors.Is(err, ErrPort) {
				return fmt.Errorf("connect to a port closed without an accept: %v, want ErrPort", err)
			}
		}
		return nil
	}, WithTimeout(2*time.Minute))
	require.NoError(t, err)
}

// A member of the accepting group fails as the groups connect: every
// survivor, in both groups, returns a failure's error, whether the
// acceptors' leader saw the failure before it took the connection or
// after (then it tells the connecting leader, which it met, instead of
// leaving it waiting; TestKillDuringAcceptConnect strikes at random
// moments). A connecting group that fails may never connect: an Accept
// waits as long as it takes, as MPI's.
func TestAcceptConnectGroupMemberFailed(t *testing.T) {
	for _, victim := range []int{1} {
		t.Run(fmt.Sprintf("victim%d", victim), func(t *testing.T) {
			errOnPurpose := errors.New("failing on purpose")
			err := Run(4, func(world *Comm) error {
				me := world.Rank()
				side, err := world.Split(me/2, me)
				if err != nil {
					return err
				}
				port := make([]byte, 32)
				if me == 0 {
					p, err := side.OpenPort()
					if err != nil {
						return err
					}
					copy(port, p)
				}
				if err := Bcast(world, port, 0); err != nil {
					return err
				}
				// every rank has the port before the victim goes (a
				// connecting leader whose Bcast failed would never
				// connect, and the Accept rightly wait for it): each tells
				// the victim so, point to point (a collective on the
				// world would fail at the ranks that learned of the
				// failure first)
				if me == victim {
					for r := range world.Size() {
						if r != victim {
							if _, err := Recv(world, []byte{0}, r, 9); err != nil {
								return err
							}
						}
					}
					return errOnPurpose
				}
				if err := Send(world, []byte{1}, victim, 9); err != nil {
					return err
				}
				if me < 2 {
					_, err = side.Accept(string(bytes.TrimRight(port, "\x00")), 0)
				} else {
					_, err = side.Connect(string(bytes.TrimRight(port, "\x00")), 0)
				}
				if !errors.Is(err, ErrProcFailed) {
					return fmt.Errorf("got %v, want ErrProcFailed", err)
				}
				return nil
			}, KeepGoing(), WithTimeout(time.Minute))
			require.NotErrorIs(t, err, ErrTimeout)
			require.ErrorIs(t, err, errOnPurpose)
			require.NotContains(t, err.Error(), "want ErrProcFailed")
		})
	}
}

// An Accept waiting for a connection on a communicator that another rank
// revokes returns ErrRevoked, as the communicator's operations do: the
// other rank may have left the Accept, and nothing else would end it.
func TestAcceptOnRevokedComm(t *testing.T) {
	err := Run(2, func(world *Comm) error {
		if world.Rank() == 1 {
			return world.Revoke() // instead of joining the Accept
		}
		port, err := world.Self().OpenPort()
		if err != nil {
			return err
		}
		defer world.Self().ClosePort(port)
		if _, err := world.Accept(port, 0); !errors.Is(err, ErrRevoked) {
			return fmt.Errorf("accept on a revoked communicator: %v, want ErrRevoked", err)
		}
		return nil
	}, WithTimeout(time.Minute))
	require.NoError(t, err)
}

// A flood of connect requests for a port that is not open, queued before
// the listener runs: the listener takes them in a loop (not a call per
// request nested in the last), refuses at most maxRefusals at a time, and
// the port that then opens still accepts.
func TestPortRequestFlood(t *testing.T) {
	const flood = 5000
	err := Run(2, func(world *Comm) error {
		p := world.p
		// nonblocking: past its credit a send waits for the listener,
		// which starts once the barrier is over
		sends := make([]p2pRequest, flood)
		if world.Rank() == 1 {
			reqs := make([]byte, flood*portReqLen)
			for i := range sends {
				req := reqs[i*portReqLen : (i+1)*portReqLen]
				binary.LittleEndian.PutUint32(req, 77)                  // no such port
				binary.LittleEndian.PutUint32(req[4:], uint32(TagUB-i)) // reply tags no Connect of this test uses
				sends[i] = p2pRequest{c: world, kind: p2pSend, world: 0, tag: 0, ctx: portContext, buf: req, elem: 1}
				if err := sends[i].start(); err != nil {
					return err
				}
			}
		}
		if err := Barrier(world); err != nil { // the flood is queued at rank 0
			return err
		}
		var port string
		if world.Rank() == 0 {
			var err error
			if port, err = world.Self().OpenPort(); err != nil { // starts the listener
				return err
			}
			// the refusals being sent, each on a goroutine of its own
			// (counted in the stacks: other tests' goroutines may still
			// be winding down)
			buf := make([]byte, 64<<20)
			refusing := 0
			for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
				// one not started yet shows its go statement's wrapper
				if strings.Contains(g, ".refuse(") || strings.Contains(g, "CompleteFrom.gowrap") {
					refusing++
				}
			}
			if refusing > maxRefusals {
				return fmt.Errorf("%d refusals in flight after the flood, want at most %d", refusing, maxRefusals)
			}
		}
		name := make([]byte, 32)
		copy(name, port)
		if err := Bcast(world, name, 0); err != nil {
			return err
		}
		if world.Rank() == 1 {
			for i := range sends {
				p.await(sends[i].op, sends[i].block())
				if _, err := sends[i].result(false); err != nil {
					return err
				}
			}
		}
		var inter *Comm
		var err error
		if world.Rank() == 0 {
			inter, err = world.Self().Accept(port, 0)
		} else {
			inter, err = world.Self().Connect(string(bytes.TrimRight(name, "\x00")), 0)
		}
		if err != nil {
			return err
		}
		return inter.Disconnect()
	}, WithTimeout(2*time.Minute))
	require.NoError(t, err)
}
