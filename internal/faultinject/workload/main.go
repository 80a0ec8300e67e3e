// Workload is the program every rank of a fault-injected job runs
// (package internal/faultinject): it joins the job, then runs one
// operation in a loop, in one of its three forms, until the operation
// fails, as a long computation would. With -finalize it stops after
// -iters loops and calls Finalize instead.
//
// -op ulfm is the fault-tolerant program instead (run it with meshrun
// --keep-going): -rounds rounds of Revoke, Accept/Connect, Agree and Shrink on a
// communicator that shrinks each round (faultinject.ULFMOp says what each
// round does), then Finalize. A survivor of a failure ends with "fi exit
// ok".
//
// It reports its progress on standard output, one line each, which the
// harness reads through meshrun's "[rank] " prefix:
//
//	fi ready                 Init returned: the job formed
//	fi op                    the loop starts
//	fi finalize              Finalize starts (with -finalize, and ulfm)
//	fi step K STEP           ulfm: round K's step (revoke, connect, agree, shrink) starts
//	fi round K …             ulfm: what round K got (faultinject.ULFMRound)
//	fi note round K: ERROR   ulfm: the error that ended the wait or Agree
//	fi exit ok               the rank ends without error (status 0)
//	fi exit error: MESSAGE   an operation failed (status 1 if the error
//	                         is ErrProcFailed, 2 otherwise)
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/faultinject"
)

func main() {
	op := flag.String("op", "allreduce", "the operation: p2p, barrier, bcast, reduce, allreduce, gather, scatter, allgather, alltoall, reducescatter, scan")
	form := flag.String("form", "blocking", "blocking, nonblocking or persistent")
	count := flag.Int("count", 1024, "elements per rank and operation")
	iters := flag.Int("iters", 0, "loops before Finalize with -finalize; 0: until an error")
	finalize := flag.Bool("finalize", false, "stop after -iters loops and call Finalize")
	rounds := flag.Int("rounds", 3, "-op ulfm: rounds of Revoke, Agree and Shrink")
	keepGoing := flag.Bool("keep-going", true, "-op ulfm: Init with meshmpi.KeepGoing (false: the job's keep-going setting must say so)")
	flag.Parse()
	var err error
	if *op == faultinject.ULFMOp {
		err = runULFM(*rounds, *keepGoing)
	} else {
		err = run(*op, *form, *count, *iters, *finalize)
	}
	if err != nil {
		fmt.Printf("fi exit error: %v\n", err)
		if errors.Is(err, meshmpi.ErrProcFailed) {
			os.Exit(1)
		}
		os.Exit(2)
	}
	fmt.Println("fi exit ok")
}

func run(op, form string, count, iters int, finalize bool) error {
	w, err := meshmpi.Init()
	if err != nil {
		return err
	}
	fmt.Println("fi ready")
	step, err := newStep(w, op, form, count)
	if err != nil {
		return err
	}
	fmt.Println("fi op")
	for i := 0; !finalize || i < iters; i++ {
		if err := step(); err != nil {
			return err
		}
	}
	fmt.Println("fi finalize")
	return meshmpi.Finalize()
}

// runULFM is the fault-tolerant workload: rounds of Revoke (in some),
// Agree and Shrink, each round on the communicator the last one shrank to.
func runULFM(rounds int, keepGoing bool) error {
	var opts []meshmpi.Option
	if keepGoing {
		opts = append(opts, meshmpi.KeepGoing())
	}
	w, err := meshmpi.Init(opts...)
	if err != nil {
		return err
	}
	fmt.Println("fi ready")
	worldGroup, err := w.Group()
	if err != nil {
		return err
	}
	me := w.Rank()
	fmt.Println("fi op")
	c := w
	for k := range rounds {
		if rev, ok := faultinject.ULFMRevoker(k, c.Size()); ok {
			fmt.Printf("fi step %d %s\n", k, faultinject.StepRevoke)
			if c.Rank() == rev {
				if err := c.Revoke(); err != nil {
					return fmt.Errorf("round %d: revoke: %w", k, err)
				}
			} else {
				// nobody sends: only the revocation, or a failure nobody
				// acknowledged (the revoker's, say), ends the wait
				_, err := meshmpi.Recv(c, make([]int64, 1), meshmpi.AnySource, 99)
				fmt.Printf("fi note round %d: %v\n", k, err)
				if !errors.Is(err, meshmpi.ErrRevoked) && !errors.Is(err, meshmpi.ErrProcFailed) && !errors.Is(err, meshmpi.ErrProcFailedPending) {
					return fmt.Errorf("round %d: a receive only a revocation or a failure ends returned %v", k, err)
				}
			}
		}
		connected := ""
		if faultinject.ULFMConnects(k, c.Size()) {
			fmt.Printf("fi step %d %s\n", k, faultinject.StepConnect)
			ok, err := connectHalves(c, k)
			if err != nil {
				return fmt.Errorf("round %d: connect: %w", k, err)
			}
			connected = strconv.FormatBool(ok)
		}
		fmt.Printf("fi step %d %s\n", k, faultinject.StepAgree)
		v, err := c.Agree(faultinject.ULFMFlag(me, k))
		if err != nil && !errors.Is(err, meshmpi.ErrProcFailed) {
			return fmt.Errorf("round %d: agree: %w", k, err)
		}
		if err != nil { // for the output of a failed run: which failure each rank saw
			fmt.Printf("fi note round %d: %v\n", k, err)
		}
		got := faultinject.ULFMRound{Round: k, Agreed: v, ProcFailed: err != nil, Connected: connected}
		fmt.Printf("fi step %d %s\n", k, faultinject.StepShrink)
		s, err := c.Shrink()
		if err != nil {
			return fmt.Errorf("round %d: shrink: %w", k, err)
		}
		if got.Group, err = worldRanks(s, worldGroup); err != nil {
			return fmt.Errorf("round %d: %w", k, err)
		}
		fmt.Printf("fi %s\n", got)
		if c != w {
			if err := c.Free(); err != nil {
				return fmt.Errorf("round %d: free the communicator before the shrink: %w", k, err)
			}
		}
		c = s
	}
	fmt.Println("fi finalize")
	return meshmpi.Finalize()
}

// connectHalves is a connect step: c's even ranks accept on a port of
// c's rank 0, its odd ranks connect, and they merge. It returns whether
// every survivor connected and merged, agreed on c; an error only for
// one no failure explains.
func connectHalves(c *meshmpi.Comm, k int) (bool, error) {
	merged, err := acceptConnect(c)
	if err != nil && !failure(err) {
		return false, err
	}
	if err != nil { // which failure each rank saw, for a failed run's output
		fmt.Printf("fi note round %d: %v\n", k, err)
	}
	ok := err == nil
	for _, step := range []string{"connect", "merge"} {
		v, aerr := c.Agree(boolInt(ok))
		if aerr != nil && !errors.Is(aerr, meshmpi.ErrProcFailed) {
			return false, fmt.Errorf("agree on the %s: %w", step, aerr)
		}
		if ok = aerr == nil && v == 1; !ok {
			return false, nil
		}
		if step == "connect" {
			m, err := merged()
			if err != nil && !failure(err) {
				return false, err
			}
			ok = err == nil && m.Size() == c.Size()
			if err == nil {
				_ = m.Free()
			}
		}
	}
	return true, nil
}

// acceptConnect splits c in halves, connects them through a port of c's
// rank 0, and returns the merge, to run once every rank connected.
func acceptConnect(c *meshmpi.Comm) (merge func() (*meshmpi.Comm, error), err error) {
	half, err := c.Split(c.Rank()%2, c.Rank())
	// a failure during the Split may fail it at some ranks only (ULFM
	// does not make constructions uniform): those without half cannot
	// revoke it for the others, so every rank first agrees on c that all
	// hold it
	v, aerr := c.Agree(boolInt(err == nil))
	if err == nil && (aerr != nil || v == 0) {
		err = fmt.Errorf("a rank's split failed: %w", errors.Join(aerr, meshmpi.ErrProcFailed))
	}
	if err != nil {
		return nil, err
	}
	// a failure outside half is no failure of half's: a rank that fails
	// here revokes half, or the rest of its half could wait for it in
	// Accept or Connect forever (ULFM leaves that to the program)
	defer func() {
		if err != nil {
			_ = half.Revoke()
		}
	}()
	name := make([]byte, 64)
	if c.Rank() == 0 {
		port, err := half.OpenPort()
		if err != nil {
			fmt.Printf("fi note: open port: %v\n", err) // the empty name tells the others
		} else {
			defer func() { _ = half.ClosePort(port) }()
			copy(name, port)
		}
	}
	if err := meshmpi.Bcast(c, name, 0); err != nil {
		return nil, err
	}
	port := string(bytes.TrimRight(name, "\x00"))
	if port == "" {
		return nil, errors.New("rank 0 opened no port")
	}
	var inter *meshmpi.Comm
	switch {
	case c.Rank()%2 == 1:
		inter, err = half.Connect(port, 0)
	case c.Rank() == 0:
		inter, err = acceptWatching(c, half, port)
	default:
		inter, err = half.Accept(port, 0)
	}
	if err != nil {
		return nil, err
	}
	return func() (*meshmpi.Comm, error) { return inter.IntercommMerge(c.Rank()%2 == 1) }, nil
}

// acceptWatching accepts on port, and closes it when a rank of c fails:
// the connecting leader may be the one, and the connect never come.
func acceptWatching(c, half *meshmpi.Comm, port string) (*meshmpi.Comm, error) {
	type result struct {
		inter *meshmpi.Comm
		err   error
	}
	done := make(chan result, 1)
	go func() {
		inter, err := half.Accept(port, 0)
		done <- result{inter, err}
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.inter, r.err
		case <-tick.C:
			if g, err := c.GetFailed(); err == nil && g.Size() > 0 {
				_ = half.ClosePort(port) // Accept returns ErrPort, unless it met its connector
			}
		}
	}
}

// failure reports whether err is one a failure explains.
func failure(err error) bool {
	return errors.Is(err, meshmpi.ErrProcFailed) || errors.Is(err, meshmpi.ErrRevoked) || errors.Is(err, meshmpi.ErrPort)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// worldRanks returns c's ranks as ranks of the world's group.
func worldRanks(c *meshmpi.Comm, world *meshmpi.Group) ([]int, error) {
	g, err := c.Group()
	if err != nil {
		return nil, err
	}
	ranks := make([]int, g.Size())
	for i := range ranks {
		ranks[i] = i
	}
	return g.TranslateRanks(ranks, world)
}

// newStep returns one loop of op in form on w.
func newStep(w *meshmpi.Comm, op, form string, count int) (func() error, error) {
	n, me := w.Size(), w.Rank()
	send := make([]int64, count*n)
	recv := make([]int64, count*n)
	for i := range send {
		send[i] = int64(me*len(send) + i)
	}
	one, oneOut := send[:count], recv[:count]
	right, left := (me+1)%n, (me+n-1)%n
	counts := make([]int, n)
	for i := range counts {
		counts[i] = count
	}

	// The three forms of every operation: blocking, a nonblocking start,
	// and a persistent init.
	type forms struct {
		blocking func() error
		start    func() ([]*meshmpi.Request, error)
	}
	req := func(r *meshmpi.Request, err error) ([]*meshmpi.Request, error) {
		return []*meshmpi.Request{r}, err
	}
	var f forms
	switch op {
	case "p2p":
		f.blocking = func() error {
			_, err := meshmpi.Sendrecv(w, one, right, 1, oneOut, left, 1)
			return err
		}
		f.start = func() ([]*meshmpi.Request, error) {
			r, err := meshmpi.Irecv(w, oneOut, left, 1)
			if err != nil {
				return nil, err
			}
			s, err := meshmpi.Isend(w, one, right, 1)
			return []*meshmpi.Request{r, s}, err
		}
	case "barrier":
		f.blocking = func() error { return meshmpi.Barrier(w) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Ibarrier(w)) }
	case "bcast":
		f.blocking = func() error { return meshmpi.Bcast(w, one, 0) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Ibcast(w, one, 0)) }
	case "reduce":
		f.blocking = func() error { return meshmpi.Reduce(w, one, oneOut, meshmpi.Sum, 0) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Ireduce(w, one, oneOut, meshmpi.Sum, 0)) }
	case "allreduce":
		f.blocking = func() error { return meshmpi.Allreduce(w, one, oneOut, meshmpi.Sum) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Iallreduce(w, one, oneOut, meshmpi.Sum)) }
	case "gather":
		f.blocking = func() error { return meshmpi.Gather(w, one, recv, 0) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Igather(w, one, recv, 0)) }
	case "scatter":
		f.blocking = func() error { return meshmpi.Scatter(w, send, oneOut, 0) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Iscatter(w, send, oneOut, 0)) }
	case "allgather":
		f.blocking = func() error { return meshmpi.Allgather(w, one, recv) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Iallgather(w, one, recv)) }
	case "alltoall":
		f.blocking = func() error { return meshmpi.Alltoall(w, send, recv) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Ialltoall(w, send, recv)) }
	case "reducescatter":
		f.blocking = func() error { return meshmpi.ReduceScatter(w, send, oneOut, counts, meshmpi.Sum) }
		f.start = func() ([]*meshmpi.Request, error) {
			return req(meshmpi.IreduceScatter(w, send, oneOut, counts, meshmpi.Sum))
		}
	case "scan":
		f.blocking = func() error { return meshmpi.Scan(w, one, oneOut, meshmpi.Sum) }
		f.start = func() ([]*meshmpi.Request, error) { return req(meshmpi.Iscan(w, one, oneOut, meshmpi.Sum)) }
	default:
		return nil, fmt.Errorf("-op %q: no such operation", op)
	}

	switch form {
	case "blocking":
		return f.blocking, nil
	case "nonblocking":
		return func() error {
			reqs, err := f.start()
			if err != nil {
				return err
			}
			return meshmpi.Waitall(context.Background(), reqs, nil)
		}, nil
	case "persistent":
		reqs, err := persistent(w, op, send, recv, one, oneOut, counts, left, right)
		if err != nil {
			return nil, err
		}
		return func() error { // a restart of the same requests, each loop
			if err := meshmpi.Startall(reqs); err != nil {
				return err
			}
			return meshmpi.Waitall(context.Background(), reqs, nil)
		}, nil
	}
	return nil, fmt.Errorf("-form %q: want blocking, nonblocking or persistent", form)
}

// persistent initializes op's persistent requests.
func persistent(w *meshmpi.Comm, op string, send, recv, one, oneOut []int64, counts []int, left, right int) ([]*meshmpi.Request, error) {
	var r *meshmpi.Request
	var err error
	switch op {
	case "p2p":
		rr, err := meshmpi.RecvInit(w, oneOut, left, 1)
		if err != nil {
			return nil, err
		}
		s, err := meshmpi.SendInit(w, one, right, 1)
		return []*meshmpi.Request{rr, s}, err
	case "barrier":
		r, err = meshmpi.BarrierInit(w)
	case "bcast":
		r, err = meshmpi.BcastInit(w, one, 0)
	case "reduce":
		r, err = meshmpi.ReduceInit(w, one, oneOut, meshmpi.Sum, 0)
	case "allreduce":
		r, err = meshmpi.AllreduceInit(w, one, oneOut, meshmpi.Sum)
	case "gather":
		r, err = meshmpi.GatherInit(w, one, recv, 0)
	case "scatter":
		r, err = meshmpi.ScatterInit(w, send, oneOut, 0)
	case "allgather":
		r, err = meshmpi.AllgatherInit(w, one, recv)
	case "alltoall":
		r, err = meshmpi.AlltoallInit(w, send, recv)
	case "reducescatter":
		r, err = meshmpi.ReduceScatterInit(w, send, oneOut, counts, meshmpi.Sum)
	case "scan":
		r, err = meshmpi.ScanInit(w, one, oneOut, meshmpi.Sum)
	}
	return []*meshmpi.Request{r}, err
}
