// Farm is a task farm that survives its workers: rank 0, the manager,
// hands out numbered tasks to whichever worker asks, and when a worker
// fails, the task it held goes back to the queue. It shows ULFM's
// acknowledge-and-reassign pattern (User-Level Failure Mitigation, the
// MPI Forum's fault-tolerance proposal: MPIX_Comm_failure_ack in Open
// MPI and MPICH, Comm.AckFailed here).
//
// A worker sends the manager a request (at first) or a result, and
// receives its next task or the word to stop. Task t is a hash chain, t
// put through SplitMix64's mixer -work times; the answer is the sum of
// every task's hash (mod 2^64), which the manager checks against a
// sequential run and prints.
//
// The manager waits for its next message with a nonblocking receive from
// AnySource. Under ULFM a failure interrupts such a wait: the dead worker
// might have been the sender, so the wait returns ErrProcFailedPending and
// the receive stays posted. The manager then asks which ranks failed
// (GetFailed), acknowledges them (AckFailed: later failures will interrupt
// the wait again, these will not), puts each failed worker's task back in
// the queue and waits again on the same receive. No task is lost; a
// worker's last result may arrive after its task was handed to another
// worker (its message was on its way when it died), so each result is
// recorded once and a duplicate is only counted. Workers idle while tasks
// are still out wait for the queue to refill, and once every task is done
// each is told to stop; if no worker is left, the manager does the rest
// itself. The manager knows a worker by its first request, and only its
// end (every worker stopped or failed) counts the workers: a worker
// joining a running job (a later feature, through Comm.Accept and
// IntercommMerge) would only have to start asking, and raise that count.
//
// Nothing is revoked or shrunk: under ULFM point-to-point between live
// ranks keeps working on a communicator with failed members, and the farm
// uses no collective. Workers need no recovery of their own: they talk
// only to the manager.
// When the manager fails, a worker's receive from it fails with
// ErrProcFailed and the worker ends, saying so ("the manager (rank 0)
// failed: …").
//
// The program runs with KeepGoing, so in-process a rank that fails (its
// function returns an error) fails alone, as a crashed process would; a
// job under meshrun needs --keep-going for the same. The -fail flag makes
// ranks fail on purpose: -fail 2:3 makes worker 2 fail while it holds its
// fourth task (after 3 done), -fail 0:10 makes the manager fail after it
// recorded 10 results. The exit status is the survivors' result, as
// meshrun --keep-going reports it: 0 when the answer is right, whatever
// ranks failed on purpose (a process whose every rank failed on purpose
// exits 3).
//
// Run it with
//
//	go run ./examples/farm -n 4 -tasks 200 -work 20000 -fail 2:5,3:40
//
// or, one process a rank, meshrun --keep-going -n 4 ./examples/farm.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/meshmpi/meshmpi"
)

const (
	manager   = 0
	tagToWork = 1 // manager → worker: [task] or [stop]
	tagResult = 2 // worker → manager: [task, hash] or [ask, 0]
	stop, ask = -1, -1
)

// errOnPurpose is the failure -fail asks for: the end of a rank, not of the
// program.
var errOnPurpose = errors.New("failing on purpose (-fail)")

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	tasks := flag.Int("tasks", 200, "number of tasks")
	work := flag.Int("work", 20000, "hash steps per task")
	failAt := flag.String("fail", "", "rank:k,… — a worker fails holding its task k+1, the manager after k results")
	flag.Parse()
	fails, err := parseFails(*failAt)
	if err != nil || *tasks < 0 || *work < 0 {
		fmt.Fprintf(os.Stderr, "farm: -tasks and -work must not be negative; -fail is rank:k,… (%v)\n", err)
		os.Exit(2)
	}
	var finished atomic.Int32 // ranks of this process that did their part
	err = meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		err := farm(world, *tasks, *work, fails)
		if err == nil {
			finished.Add(1)
		}
		return err
	}, meshmpi.KeepGoing())
	os.Exit(exitStatus(err, finished.Load()))
}

// farm is what every rank runs.
func farm(world *meshmpi.Comm, tasks, work int, fails map[int]int) error {
	k, fail := fails[world.Rank()]
	if !fail {
		k = -1
	}
	if world.Rank() != manager {
		return serve(world, work, k)
	}
	fmt.Printf("%d tasks of %d hash steps for %d workers\n", tasks, work, world.Size()-1)
	t, err := manage(world, tasks, work, k)
	if err != nil {
		return err
	}
	return t.report(work)
}

// hash is task t's result: t through SplitMix64's mixer work times.
func hash(t, work int) uint64 {
	x := uint64(t)
	for range work {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		x = z ^ z>>31
	}
	return x
}

// serve is a worker: ask, then do tasks until told to stop. With failAfter
// ≥ 0 it fails holding its task failAfter+1.
func serve(world *meshmpi.Comm, work, failAfter int) error {
	msg := []int64{ask, 0}
	task := []int64{0}
	for done := 0; ; done++ {
		if err := meshmpi.Send(world, msg, manager, tagResult); err != nil {
			return fmt.Errorf("the manager (rank %d) failed: %w", manager, err)
		}
		if _, err := meshmpi.Recv(world, task, manager, tagToWork); err != nil {
			return fmt.Errorf("the manager (rank %d) failed: %w", manager, err)
		}
		if task[0] == stop {
			return nil
		}
		if done == failAfter {
			return fmt.Errorf("worker %d holding task %d after %d tasks: %w", world.Rank(), task[0], done, errOnPurpose)
		}
		msg[0], msg[1] = task[0], int64(hash(int(task[0]), work))
	}
}

// worker is what the manager knows of a worker.
type worker struct {
	task  int // the task it holds, or -1
	idle  bool
	ended bool // told to stop, or failed
}

// tally is what the manager made of the tasks.
type tally struct {
	results    []uint64 // by task
	by         []int    // tasks recorded, by rank (the manager's own at 0)
	failed     []int    // workers that failed
	reassigned int      // tasks put back in the queue
	duplicates int      // results for tasks done already, ignored
}

// manage is the manager: it hands out tasks, collects results and
// reassigns the tasks of failed workers. With failAfter ≥ 0 it fails once
// it recorded failAfter results.
func manage(world *meshmpi.Comm, tasks, work, failAfter int) (*tally, error) {
	queue := make([]int, tasks)
	for t := range queue {
		queue[t] = tasks - 1 - t // popped from the end: task 0 first
	}
	results, recorded := make([]uint64, tasks), make([]bool, tasks)
	workers := map[int]*worker{}
	left := world.Size() - 1 // workers not yet stopped or failed
	done := 0
	t := &tally{results: results, by: make([]int, world.Size())}

	// give sends worker w its next task, or parks it if none is queued
	give := func(w int, wk *worker) {
		for len(queue) > 0 && recorded[queue[len(queue)-1]] {
			queue = queue[:len(queue)-1] // done meanwhile (by a reassigned copy)
		}
		next := stop
		switch {
		case len(queue) > 0:
			next, queue = queue[len(queue)-1], queue[:len(queue)-1]
		case done < tasks:
			wk.idle = true // tasks are out: one may come back
			return
		}
		wk.task, wk.idle = next, false
		if next == stop {
			wk.ended = true
			left--
		}
		// a failed worker shows up in GetFailed: its task is requeued then
		_ = meshmpi.Send(world, []int64{int64(next)}, w, tagToWork)
	}
	// wakeIdle hands requeued tasks (or the stop) to parked workers
	wakeIdle := func() {
		for w, wk := range workers {
			if wk.idle && !wk.ended {
				give(w, wk)
			}
		}
	}

	msg := make([]int64, 2)
	var recv *meshmpi.Request
	for left > 0 {
		if recv == nil {
			var err error
			if recv, err = meshmpi.Irecv(world, msg, meshmpi.AnySource, tagResult); err != nil {
				return nil, err
			}
		}
		st, err := recv.Wait(context.Background())
		if errors.Is(err, meshmpi.ErrProcFailedPending) {
			// a worker failed: acknowledge, requeue its task, wait again
			lost, err := acknowledge(world)
			if err != nil {
				return nil, err
			}
			for _, w := range lost {
				wk := workers[w]
				if wk == nil {
					wk = &worker{task: -1}
					workers[w] = wk
				}
				t.failed = append(t.failed, w)
				if !wk.ended {
					left--
				}
				wk.ended, wk.idle = true, false
				if wk.task >= 0 && !recorded[wk.task] {
					queue = append(queue, wk.task)
					t.reassigned++
				}
				wk.task = -1
			}
			wakeIdle()
			continue // the receive is still posted
		}
		if err != nil {
			return nil, err
		}
		recv = nil
		w, task := st.Source, int(msg[0])
		wk := workers[w]
		if wk == nil { // a new worker's first request
			wk = &worker{task: -1}
			workers[w] = wk
		}
		if task != ask {
			if recorded[task] {
				t.duplicates++
			} else {
				results[task], recorded[task] = uint64(msg[1]), true
				t.by[w]++
				done++
			}
			wk.task = -1
		}
		if done == failAfter {
			return nil, fmt.Errorf("the manager after %d results: %w", done, errOnPurpose)
		}
		if !wk.ended {
			give(w, wk)
		}
		if done == tasks {
			wakeIdle() // tell the parked workers to stop
		}
	}
	if recv != nil { // every worker failed: the receive is still posted
		_ = recv.Cancel()
		_, _ = recv.Wait(context.Background())
	}

	for task := range tasks { // no worker left: the manager does the rest
		if !recorded[task] {
			results[task], recorded[task] = hash(task, work), true
			t.by[manager]++
		}
	}
	slices.Sort(t.failed)
	return t, nil
}

// acknowledge acknowledges every failure known and returns the ranks
// that failed since the last call.
func acknowledge(c *meshmpi.Comm) ([]int, error) {
	before, err := c.FailureGetAcked()
	if err != nil {
		return nil, err
	}
	failed, err := c.GetFailed()
	if err != nil {
		return nil, err
	}
	if _, err := c.AckFailed(failed.Size()); err != nil {
		return nil, err
	}
	g, err := c.Group()
	if err != nil {
		return nil, err
	}
	ranks := make([]int, failed.Size()-before.Size()) // GetFailed's order: the new ones last
	for i := range ranks {
		ranks[i] = before.Size() + i
	}
	return failed.TranslateRanks(ranks, g)
}

// report checks the answer against a sequential run and prints it.
func (t *tally) report(work int) error {
	var got, want uint64
	for task, r := range t.results {
		got += r
		want += hash(task, work)
	}
	fmt.Printf("answer %#016x, sequential %#016x\n", got, want)
	per := []string{fmt.Sprintf("manager %d", t.by[manager])}
	for w := 1; w < len(t.by); w++ {
		s := fmt.Sprintf("worker %d: %d", w, t.by[w])
		if slices.Contains(t.failed, w) {
			s += " (failed)"
		}
		per = append(per, s)
	}
	fmt.Println("tasks done by", strings.Join(per, ", "))
	fmt.Printf("failed workers %v, tasks reassigned %d, duplicate results ignored %d\n", t.failed, t.reassigned, t.duplicates)
	if got != want {
		return fmt.Errorf("the answer %#x differs from the sequential %#x", got, want)
	}
	fmt.Println("ok")
	return nil
}

// parseFails reads -fail: rank:k,…
func parseFails(s string) (map[int]int, error) {
	fails := map[int]int{}
	for f := range strings.SplitSeq(s, ",") {
		if f == "" {
			continue
		}
		r, k, ok := strings.Cut(f, ":")
		rank, err1 := strconv.Atoi(r)
		after, err2 := strconv.Atoi(k)
		if !ok || err1 != nil || err2 != nil || rank < 0 || after < 0 {
			return nil, fmt.Errorf("bad -fail %q", f)
		}
		fails[rank] = after
	}
	return fails, nil
}

// exitStatus is the program's result as meshrun --keep-going gives a
// job's: the ranks that failed on purpose are listed, not counted; any
// other error is a failure (1); a process whose every rank failed on
// purpose exits 3, as a crashed rank would exit non-zero.
func exitStatus(err error, finished int32) int {
	if err == nil {
		return 0
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok { // Run's, one a rank
		errs = j.Unwrap()
	}
	status := 0
	for _, e := range errs {
		fmt.Fprintln(os.Stderr, "farm:", e)
		if !errors.Is(e, errOnPurpose) {
			status = 1
		}
	}
	if status == 0 && finished == 0 {
		status = 3
	}
	return status
}
