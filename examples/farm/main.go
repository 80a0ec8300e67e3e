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
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	late := flag.Int("late", 0, "in process: the last ranks that play workers joining the running job")
	wait := flag.Duration("wait", 30*time.Second, "how long a late worker looks for the farm")
	runFor := flag.Duration("for", 0, "keep adding tasks for this long (then -tasks is the first batch)")
	stats := flag.Duration("stats", 0, "print this process's goroutines, heap and open files this often")
	flag.Parse()
	fails, err := parseFails(*failAt)
	if err != nil || *tasks < 0 || *work < 0 || *late < 0 || *late >= *n {
		fmt.Fprintf(os.Stderr, "farm: -tasks and -work must not be negative; -fail is rank:k,… (%v)\n", err)
		os.Exit(2)
	}
	if *stats > 0 {
		go printStats(*stats)
	}
	var finished atomic.Int32 // ranks of this process that did their part
	err = meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		l := *late
		if world.Late() {
			l = 0
		}
		err := farm(world, *tasks, *work, fails, l, *wait, *runFor)
		if err == nil {
			finished.Add(1)
		}
		return err
	}, meshmpi.KeepGoing())
	os.Exit(exitStatus(err, finished.Load()))
}

// farm is what every rank runs.
func farm(world *meshmpi.Comm, tasks, work int, fails map[int]int, late int, wait, runFor time.Duration) error {
	k, fail := fails[world.Rank()]
	if !fail {
		k = -1
	}
	if world.Late() || world.Rank() >= world.Size()-late {
		return join(world, work, k, wait)
	}
	if world.Rank() != manager {
		return serve(world, work, k)
	}
	fmt.Printf("%d tasks of %d hash steps for %d workers\n", tasks, work, world.Size()-1-late)
	var until time.Time
	if runFor > 0 {
		until = time.Now().Add(runFor)
		fmt.Printf("adding tasks for %v\n", runFor)
	}
	t, err := manageWith(world, tasks, work, k, late, until)
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

// serve is a worker of the world: ask, then do tasks until told to stop.
// With failAfter ≥ 0 it fails holding its task failAfter+1.
func serve(world *meshmpi.Comm, work, failAfter int) error {
	return serveOn(world, manager, work, failAfter)
}

// serveOn is a worker that talks to the manager, rank mgr of c.
func serveOn(c *meshmpi.Comm, mgr, work, failAfter int) error {
	msg := []int64{ask, 0}
	task := []int64{0}
	for done := 0; ; done++ {
		if err := meshmpi.Send(c, msg, mgr, tagResult); err != nil {
			return fmt.Errorf("the manager (rank %d) failed: %w", manager, err)
		}
		if _, err := meshmpi.Recv(c, task, mgr, tagToWork); err != nil {
			return fmt.Errorf("the manager (rank %d) failed: %w", manager, err)
		}
		if task[0] == stop {
			return nil
		}
		if done == failAfter {
			return fmt.Errorf("worker %d holding task %d after %d tasks: %w", c.Rank(), task[0], done, errOnPurpose)
		}
		msg[0], msg[1] = task[0], int64(hash(int(task[0]), work))
	}
}

// service is the name the manager publishes its port under, for workers
// that join the running job.
const service = "farm"

// join is a late worker: a rank that joined the running job. It finds the
// manager's port, connects and serves on the intercommunicator until told
// to stop; a farm that is over (its name gone, its port closed) is no
// error.
func join(world *meshmpi.Comm, work, failAfter int, wait time.Duration) error {
	inter, err := connect(world, wait)
	if err != nil || inter == nil {
		return err
	}
	if err := serveOn(inter, 0, work, failAfter); err != nil {
		return err
	}
	return inter.Disconnect()
}

// connect looks the farm up and connects to it; nil if it is over or was
// never published within wait.
func connect(world *meshmpi.Comm, wait time.Duration) (*meshmpi.Comm, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	port, err := world.LookupName(ctx, service)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		fmt.Println("no farm to join: nothing published as", service)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	inter, err := world.Self().Connect(port, 0)
	if errors.Is(err, meshmpi.ErrPort) {
		fmt.Println("the farm is over")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("joining the farm: %w", err)
	}
	return inter, nil
}

// worker is what the manager knows of a worker.
type worker struct {
	task  int // the task it holds, or -1
	idle  bool
	ended bool // told to stop, or failed
	late  bool // joined the running job
}

// key names a worker: the communicator the manager talks to it on and
// its rank there (a world rank, or rank 0 of a late worker's
// intercommunicator).
type key struct {
	comm *meshmpi.Comm
	rank int
}

// source is a communicator the manager receives on: the world (from any
// worker), or one late worker's intercommunicator.
type source struct {
	comm *meshmpi.Comm
	from int // meshmpi.AnySource on the world, 0 on an intercommunicator
	req  *meshmpi.Request
	msg  []int64
}

// tally is what the manager made of the tasks.
type tally struct {
	results    []uint64 // by task (not kept by a farm that adds tasks for a while)
	sum        uint64   // of the results, mod 2^64
	tasks      int      // tasks done
	by         []int    // tasks recorded, by world rank (the manager's own at 0)
	byLate     int      // tasks recorded from late workers
	late       int      // late workers that joined
	lateFailed int      // of which failed
	failed     []int    // world workers that failed
	reassigned int      // tasks put back in the queue
	duplicates int      // results for tasks done already, ignored
}

// manage is the manager: it hands out tasks, collects results and
// reassigns the tasks of failed workers. With failAfter ≥ 0 it fails once
// it recorded failAfter results.
func manage(world *meshmpi.Comm, tasks, work, failAfter int) (*tally, error) {
	return manageWith(world, tasks, work, failAfter, 0, time.Time{})
}

// batch is how many tasks the manager adds at a time while -for lasts.
const batch = 64

// manageWith is manage in a world whose last lateInWorld ranks are not
// its workers (in process, they play late workers, joining through the
// port as late ranks of a job do). Until until (if set) it adds tasks
// whenever its queue runs low: a farm that runs for a while, whatever
// its workers' speed.
func manageWith(world *meshmpi.Comm, tasks, work, failAfter, lateInWorld int, until time.Time) (*tally, error) {
	queue := make([]int, tasks)
	for t := range queue {
		queue[t] = tasks - 1 - t // popped from the end: task 0 first
	}
	results, recorded := make([]uint64, tasks), newTaskSet(tasks)
	workers := map[key]*worker{}
	firstLate := world.Size() - lateInWorld
	left := firstLate - 1 // workers not yet stopped or failed
	done := 0
	t := &tally{results: results, by: make([]int, firstLate)}

	// workers that join the running job connect to a port of the
	// manager's alone (Self), accepted on a goroutine of their own
	arrivals, closePort, err := acceptWorkers(world)
	if err != nil {
		return nil, err
	}
	var disconnects sync.WaitGroup
	defer disconnects.Wait()
	defer closePort()
	// end tells a late worker to stop and disconnects from it
	end := func(c *meshmpi.Comm) {
		disconnects.Go(func() {
			_ = meshmpi.Send(c, []int64{stop}, 0, tagToWork)
			_ = c.Disconnect() // a worker that failed meanwhile: nothing to wait for
		})
	}

	// more adds tasks while the farm's time lasts
	more := func() {
		if until.IsZero() || len(queue) >= batch/2 || !time.Now().Before(until) {
			return
		}
		for range batch {
			queue = append(queue, tasks)
			recorded.grow() // results is not kept
			tasks++
		}
	}
	// give sends worker k its next task, or parks it if none is queued
	give := func(k key, wk *worker) {
		for len(queue) > 0 && recorded.has(queue[len(queue)-1]) {
			queue = queue[:len(queue)-1] // done meanwhile (by a reassigned copy)
		}
		more()
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
			if wk.late {
				end(k.comm)
				return
			}
		}
		// a failed worker shows up in GetFailed or its receive: its
		// task is requeued then
		_ = meshmpi.Send(k.comm, []int64{int64(next)}, k.rank, tagToWork)
	}
	// wakeIdle hands requeued tasks (or the stop) to parked workers
	wakeIdle := func() {
		for k, wk := range workers {
			if wk.idle && !wk.ended {
				give(k, wk)
			}
		}
	}
	// lost ends a failed worker and requeues its task
	lost := func(k key, late bool) {
		wk := workers[k]
		if wk == nil {
			wk = &worker{task: -1, late: late}
			workers[k] = wk
		}
		if late {
			t.lateFailed++
		} else {
			t.failed = append(t.failed, k.rank)
		}
		if !wk.ended {
			left--
		}
		wk.ended, wk.idle = true, false
		if wk.task >= 0 && !recorded.has(wk.task) {
			queue = append(queue, wk.task)
			t.reassigned++
		}
		wk.task = -1
	}
	record := func(task int, hash uint64, byRank int) {
		if recorded.has(task) {
			t.duplicates++
			return
		}
		if until.IsZero() {
			results[task] = hash
		}
		recorded.add(task)
		t.sum += hash
		if byRank >= 0 {
			t.by[byRank]++
		} else {
			t.byLate++
		}
		done++
	}

	sources := []*source{{comm: world, from: meshmpi.AnySource, msg: make([]int64, 2)}}
	reqs := []*meshmpi.Request{nil}
	more()
	for left > 0 || done < tasks {
		more()
		// take the workers that joined
		for more := true; more; {
			select {
			case c := <-arrivals.comms:
				t.late++
				left++
				workers[key{c, 0}] = &worker{task: -1, late: true}
				sources = append(sources, &source{comm: c, from: 0, msg: make([]int64, 2)})
				reqs = append(reqs, nil)
			default:
				more = false
			}
		}
		// late workers told to stop leave the wait
		for i := len(sources) - 1; i > 0; i-- {
			if s := sources[i]; workers[key{s.comm, 0}].ended {
				if s.req != nil {
					_ = s.req.Cancel()
					_, _ = s.req.Wait(context.Background())
				}
				sources, reqs = slices.Delete(sources, i, i+1), slices.Delete(reqs, i, i+1)
				delete(workers, key{s.comm, 0}) // done with: churn must not pile them up
			}
		}
		if left == 0 {
			// no worker: the manager does a task itself, and looks for
			// workers that joined again after it
			task := recorded.firstMissing()
			if n := len(queue); n > 0 {
				task, queue = queue[n-1], queue[:n-1]
			}
			if task >= 0 && !recorded.has(task) {
				record(task, hash(task, work), manager)
			}
			continue
		}
		for i, s := range sources {
			if s.req == nil {
				if s.req, err = meshmpi.Irecv(s.comm, s.msg, s.from, tagResult); err != nil {
					return nil, err
				}
			}
			reqs[i] = s.req
		}
		i, st, err := arrivals.waitany(reqs)
		if i == meshmpi.Undefined && errors.Is(err, context.Canceled) {
			continue // a worker joined
		}
		s := sources[i]
		switch {
		case errors.Is(err, meshmpi.ErrProcFailedPending):
			// a worker of the world failed: acknowledge, requeue its
			// task, wait again (the receive is still posted)
			ranks, err := acknowledge(world)
			if err != nil {
				return nil, err
			}
			for _, w := range ranks {
				if w < firstLate {
					lost(key{world, w}, false)
				}
			}
			wakeIdle()
			continue
		case err != nil && i > 0 && errors.Is(err, meshmpi.ErrProcFailed):
			// a late worker failed: its intercommunicator goes
			lost(key{s.comm, 0}, true)
			delete(workers, key{s.comm, 0})
			_ = s.comm.Free()
			sources, reqs = slices.Delete(sources, i, i+1), slices.Delete(reqs, i, i+1)
			wakeIdle()
			continue
		case err != nil:
			return nil, err
		}
		s.req = nil
		k := key{s.comm, st.Source}
		byRank := st.Source
		if i > 0 {
			byRank = -1
		}
		wk := workers[k]
		if wk == nil { // a world worker's first request
			wk = &worker{task: -1}
			workers[k] = wk
		}
		if task := int(s.msg[0]); task != ask {
			record(task, uint64(s.msg[1]), byRank)
			wk.task = -1
		}
		if done == failAfter {
			return nil, fmt.Errorf("the manager after %d results: %w", done, errOnPurpose)
		}
		if !wk.ended {
			give(k, wk)
		}
		if done == tasks {
			wakeIdle() // tell the parked workers to stop
		}
	}
	for _, s := range sources { // receives still posted: from workers that failed
		if s.req != nil {
			_ = s.req.Cancel()
			_, _ = s.req.Wait(context.Background())
		}
	}
	closePort()
	for c := range arrivals.comms { // joined as the farm ended: stop them
		t.late++
		end(c)
	}
	slices.Sort(t.failed)
	t.results, t.tasks = results, tasks
	if !until.IsZero() {
		t.results = nil
	}
	return t, nil
}

// arrivals are the late workers the manager accepted, and the way they
// interrupt its wait.
type arrivals struct {
	comms chan *meshmpi.Comm // closed when the port is

	mu   sync.Mutex
	wake context.CancelFunc // the manager's current wait
}

// acceptWorkers opens a port on the manager's own communicator, publishes
// it as service and accepts workers on it until closePort. In a world
// without a name service (one process, Init's) nobody can join.
func acceptWorkers(world *meshmpi.Comm) (a *arrivals, closePort func(), err error) {
	a = &arrivals{comms: make(chan *meshmpi.Comm, 16)}
	self := world.Self()
	port, err := self.OpenPort()
	if err != nil {
		return nil, nil, err
	}
	if err := world.PublishName(service, port); err != nil {
		_ = self.ClosePort(port)
		return nil, nil, err
	}
	go func() {
		defer close(a.comms)
		for {
			inter, err := self.Accept(port, 0)
			if err != nil {
				return // the port closed
			}
			a.comms <- inter
			a.mu.Lock()
			if a.wake != nil {
				a.wake()
			}
			a.mu.Unlock()
		}
	}()
	var once sync.Once
	return a, func() {
		once.Do(func() {
			_ = world.UnpublishName(service, port)
			_ = self.ClosePort(port)
		})
	}, nil
}

// waitany waits for one of reqs, or until a worker joins (an error
// wrapping context.Canceled, at index Undefined).
func (a *arrivals) waitany(reqs []*meshmpi.Request) (int, meshmpi.Status, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.mu.Lock()
	a.wake = cancel
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.wake = nil
		a.mu.Unlock()
	}()
	if len(a.comms) > 0 {
		return meshmpi.Undefined, meshmpi.Status{}, context.Canceled
	}
	return meshmpi.Waitany(ctx, reqs)
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
	got = t.sum
	for task := range t.tasks {
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
	if t.late > 0 {
		per = append(per, fmt.Sprintf("%d late workers: %d", t.late, t.byLate))
	}
	fmt.Println("tasks done by", strings.Join(per, ", "))
	if t.lateFailed > 0 {
		fmt.Printf("late workers failed %d\n", t.lateFailed)
	}
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

// taskSet records which tasks are done, a bit each: a farm that runs for
// hours keeps it for every task it ever made.
type taskSet struct {
	words []uint64
	n     int
}

func newTaskSet(n int) *taskSet {
	return &taskSet{words: make([]uint64, (n+63)/64), n: n}
}

func (s *taskSet) has(t int) bool { return s.words[t/64]&(1<<(t%64)) != 0 }
func (s *taskSet) add(t int)      { s.words[t/64] |= 1 << (t % 64) }

// grow adds one task, not done.
func (s *taskSet) grow() {
	if s.n%64 == 0 {
		s.words = append(s.words, 0)
	}
	s.n++
}

// firstMissing is the first task not done, or -1.
func (s *taskSet) firstMissing() int {
	for i, w := range s.words {
		if w != ^uint64(0) {
			if t := i*64 + bits.TrailingZeros64(^w); t < s.n {
				return t
			}
			return -1
		}
	}
	return -1
}
