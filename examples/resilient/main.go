// Resilient is a 1-D heat iteration that survives the loss of ranks: it
// keeps in-memory checkpoints at ring neighbors, and when a rank fails the
// survivors revoke, shrink, agree on a checkpoint, rebuild the lost block
// from its copy and finish with the answer a run without failures gives,
// bit for bit. It shows ULFM's revoke → shrink → agree pattern
// (User-Level Failure Mitigation, the MPI Forum's fault-tolerance
// proposal: MPIX_Comm_revoke, MPIX_Comm_shrink and MPIX_Comm_agree in
// Open MPI and MPICH).
//
// The rod has -points points, its ends held at their temperature; each
// iteration sets every inner point to u + α(left − 2u + right). The points
// are split in blocks over the ranks of the current communicator, which
// trade their edge points with their neighbors each iteration. Each
// point's arithmetic is the same whatever the split, so any partition,
// before or after a failure, computes the same numbers as a sequential
// run, which rank 0 does at the end and compares with.
//
// Every -every iterations each rank checkpoints: it keeps a copy of its
// block and sends another to its right neighbor on the ring, and keeps
// the copy its left neighbor sends. A Barrier then closes the checkpoint,
// so no rank starts checkpoint k+1 before every rank stored k: keeping
// the last two is enough.
//
// When a rank fails, its neighbors' exchanges with it fail
// (ErrProcFailed); the ranks further away are waiting on live neighbors
// and would wait forever, so the first rank to see the failure revokes
// the communicator (Revoke): every operation on it, on every rank, now
// fails with ErrRevoked, and every rank leaves the iteration. Then:
//
//  1. Agree on whether everyone finished (a rank that finished its last
//     iteration before the failure reached it must not walk away from
//     the others); a failure or an unfinished rank means recovery. Agree
//     is fault tolerant: every survivor gets the same answer.
//  2. Shrink: a new communicator of the survivors, the same on all.
//  3. Agree on the checkpoint to roll back to: each rank contributes one
//     bit per checkpoint it holds (its own block and its neighbor's copy);
//     the AND is the checkpoints every survivor holds, and all take the
//     newest. A rank that died in the middle of checkpoint k left its
//     neighbor without its copy of k, so the survivors go back to k−1.
//  4. Rebuild: the survivors gather every piece of that checkpoint they
//     hold (an Allgather of the rod as each holds it), which covers the
//     dead rank's block through its neighbor's copy, and split the rod
//     over themselves again.
//
// A failure during the recovery is met the same way: the next operation
// fails, and the loop goes round again. Losing two ring neighbors at once
// (or a rank and, before the next checkpoint, the neighbor that holds its
// copy) loses a block for good: the rebuild finds points no survivor
// holds and the program says so and fails rather than guess.
//
// Ranks that join the running job are admitted at checkpoints (grow.go
// tells how, fault tolerant as the rest): the job grows, the rod is
// split over the new communicator and the answer stays the same, bit for
// bit. Under meshrun, a job started with --max M takes ranks from
// meshrun join; -await K makes the leader wait at checkpoints until K
// joined (up to -wait at each), and in process -late K makes the last K
// ranks play joiners.
//
// The program runs with KeepGoing, so in-process a rank that fails (its
// function returns an error) fails alone, as a crashed process would; a
// job under meshrun needs --keep-going for the same. The -fail flag makes
// world ranks fail on purpose: -fail 3:40 makes rank 3 fail as it starts
// iteration 40 (before it checkpoints, if 40 is a checkpoint),
// -fail 3:40:sent after it sent its copy at checkpoint 40, -fail
// 4:recovery when the first recovery starts. The exit status is the
// survivors' result, as meshrun --keep-going reports it.
//
// Run it with
//
//	go run ./examples/resilient -n 8 -fail 3:47
//
// or, one process a rank, meshrun --keep-going -n 8 ./examples/resilient;
// with ranks joining,
//
//	go run ./examples/resilient -n 8 -late 2 -fail 3:47
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/meshmpi/meshmpi"
)

// alpha is the diffusion number; the explicit update is stable up to 1/2.
const alpha = 0.25

const (
	tagLeft = iota + 1 // halo going left
	tagRight
	tagCheckpoint
)

var (
	errOnPurpose = errors.New("failing on purpose (-fail)")
	errLost      = errors.New("checkpoint data lost")
)

// config is what the flags ask for.
type config struct {
	points, iters, every int
	fails                map[int]failPoint // by world rank
	late                 int               // in process: the last world ranks join as a running job's joiners do
	await                int               // joiners the leader waits for at checkpoints (up to wait each)
	wait                 time.Duration     // how long a joiner looks for the job, and the leader waits for one
	// done, if set, is told at the end what rank 0 reports (for tests)
	done func(joined int, failed []string)
}

// failPoint is where a rank fails on purpose.
type failPoint struct {
	iter     int  // as it starts this iteration
	sent     bool // at the checkpoint of iter, once it sent its copy
	recovery bool // when its first recovery starts
}

func main() {
	n := flag.Int("n", 8, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	var cfg config
	flag.IntVar(&cfg.points, "points", 400, "points on the rod")
	flag.IntVar(&cfg.iters, "iters", 200, "iterations")
	flag.IntVar(&cfg.every, "every", 10, "checkpoint every this many iterations")
	failAt := flag.String("fail", "", "rank:iteration[:sent] or rank:recovery, comma-separated: world ranks that fail on purpose")
	flag.IntVar(&cfg.late, "late", 0, "in process: the last ranks that play ranks joining the running job")
	flag.IntVar(&cfg.await, "await", 0, "the leader waits at checkpoints until this many ranks joined (-late's count in process)")
	flag.DurationVar(&cfg.wait, "wait", 30*time.Second, "how long a joining rank looks for the job, and the leader waits for one")
	flag.Parse()
	if cfg.late > 0 && cfg.await == 0 {
		cfg.await = cfg.late
	}
	var err error
	cfg.fails, err = parseFails(*failAt)
	for _, f := range cfg.fails {
		if f.sent && f.iter%cfg.every != 0 && err == nil {
			err = fmt.Errorf("-fail …:%d:sent: %d is not a checkpoint iteration", f.iter, f.iter)
		}
	}
	if err != nil || cfg.points < 2 || cfg.iters < 0 || cfg.every < 1 || cfg.late < 0 || cfg.late >= *n || cfg.await < 0 {
		fmt.Fprintf(os.Stderr, "resilient: -points must be at least 2, -every at least 1, -iters, -late and -await not negative, -late below -n (%v)\n", err)
		os.Exit(2)
	}
	var finished atomic.Int32 // ranks of this process that did their part
	err = meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		err := resilient(world, cfg)
		if err == nil {
			finished.Add(1)
		}
		return err
	}, meshmpi.KeepGoing())
	os.Exit(exitStatus(err, finished.Load()))
}

// initial is the starting temperature of point i of n: a hot stretch and
// a warm one on a cold rod.
func initial(i, n int) float64 {
	switch {
	case i >= n/5 && i < n/3:
		return 100
	case i >= n/2 && i < n/2+n/8:
		return 40 + float64(i%7)
	}
	return 0
}

// update is the new temperature of a point from its neighbors'.
func update(left, u, right float64) float64 { return u + alpha*(left-2*u+right) }

// split returns the first point and the length of block c of p blocks of
// n: the first n%p blocks are one longer.
func split(n, p, c int) (first, length int) {
	length = n / p
	first = c*length + min(c, n%p)
	if c < n%p {
		length++
	}
	return first, length
}

// piece is a stretch of a checkpoint: points first… of the rod.
type piece struct {
	first int
	data  []float64
}

// solver is one rank's state.
type solver struct {
	config
	world        *meshmpi.Comm
	comm         *meshmpi.Comm // the current communicator: the world's duplicate, then the survivors', then grown
	me           int           // world rank; -1 at a late rank (its world is its own)
	names        []int         // the members' names by rank: world ranks, -1, -2… for the joiners j1, j2…
	at           int           // the iteration whose checkpoint (and admission) is done
	it           int           // iterations done
	first, count int           // my block
	u, next      []float64     // my block with a halo point either side
	saved        map[int][]piece
	failed       []int // names of the members lost so far
	recoveries   int
	joined       int   // joiners admitted so far
	broken       error // a failure during the recovery, for the next round
	door         *door // the leader's port for joiners
	noDoor       bool  // no name service: no joiners
}

// resilient is what every rank runs.
func resilient(world *meshmpi.Comm, cfg config) (err error) {
	// the work runs on a duplicate, as a library's would: the world keeps
	// its own collectives (Finalize's among them) apart from the ones a
	// failure breaks on some ranks and not on others. Shrink makes it: on
	// a world without failures it is a duplicate, and unlike Dup a rank
	// that fails during it cannot leave the others with different results
	comm, err := world.Shrink()
	if err != nil {
		return err
	}
	joiner := world.Late() || world.Rank() >= world.Size()-cfg.late
	if cfg.late > 0 { // in process: the ranks playing joiners leave the work
		color := 0
		if joiner {
			color = meshmpi.Undefined
		}
		// a joiner needs no result of it: a member's failure that breaks
		// it here (ULFM's constructions need not be uniform) does not
		// stop it from joining later
		if comm, err = comm.Split(color, 0); err != nil && !joiner {
			return err
		}
	}
	s := &solver{config: cfg, world: world, comm: comm, me: world.Rank(), at: -1}
	// a rank failing on purpose goes as a crashed one would: the joiners
	// at its door find out and knock at its successor's
	defer func() { s.door.shut(s.comm, !errors.Is(err, errOnPurpose)) }()
	if joiner {
		s.saved = map[int][]piece{}
		if world.Late() { // -fail names the job's first ranks, not this one
			s.me, s.fails = -1, nil
		}
		if ok, err := join(world, s, cfg.wait); err != nil || !ok {
			return err
		}
		if err := s.share(); err != nil && !failure(err) {
			return err
		} else if err != nil {
			s.broken = err // recovered from below, with the members
		}
	} else {
		if cfg.points < comm.Size() {
			return fmt.Errorf("%d points cannot be split over %d ranks", cfg.points, comm.Size())
		}
		if s.me == 0 {
			fmt.Printf("%d points, %d iterations, a checkpoint every %d, on %d ranks\n", cfg.points, cfg.iters, cfg.every, comm.Size())
		}
		for r := range comm.Size() {
			s.names = append(s.names, r)
		}
		s.place(initialRod(cfg.points))
		s.saved = map[int][]piece{0: nil} // checkpoint 0 is the initial state: nothing to keep
		if comm.Rank() == 0 {
			s.openDoor()
		}
	}
	for {
		rod, err := s.run()
		if err != nil && !failure(err) && !errors.Is(err, errRecover) {
			return err
		}
		if !errors.Is(err, errRecover) { // (a checkpoint's agreement was this one: grow)
			if err != nil {
				_ = s.comm.Revoke() // the others may be waiting on live ranks: make them leave
			}
			done, aerr := s.comm.Agree(boolInt(err == nil))
			if aerr == nil && done == 1 {
				return s.check(rod)
			}
			if aerr != nil && !failure(aerr) {
				return aerr
			}
		}
		if err := s.recover(); err != nil {
			return err
		}
	}
}

// await waits for reqs, and besides looks every 50 ms whether c was
// revoked: an operation posted just as a revocation arrives can miss it
// and would wait forever (a library bug, TestRevokeRacesAPost in
// examples/ulfm_test.go; once it is mended, this is a Waitall).
func await(c *meshmpi.Comm, reqs ...*meshmpi.Request) error {
	var errs []error
	for _, r := range reqs {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			_, err := r.Wait(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				errs = append(errs, err)
				break
			}
			if c.IsRevoked() {
				_ = r.Cancel() // a receive; a collective is left to the garbage collector
				return fmt.Errorf("%v was revoked: %w", c, meshmpi.ErrRevoked)
			}
		}
	}
	return errors.Join(errs...)
}

func failure(err error) bool {
	return errors.Is(err, meshmpi.ErrProcFailed) || errors.Is(err, meshmpi.ErrRevoked)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// place makes block comm.Rank() of rod (the whole rod, each point's
// value) this rank's block.
func (s *solver) place(rod []float64) {
	s.first, s.count = split(s.points, s.comm.Size(), s.comm.Rank())
	s.u, s.next = make([]float64, s.count+2), make([]float64, s.count+2)
	copy(s.u[1:], rod[s.first:s.first+s.count])
}

func initialRod(n int) []float64 {
	rod := make([]float64, n)
	for i := range rod {
		rod[i] = initial(i, n)
	}
	return rod
}

// run iterates from s.it to the end and gathers the rod at rank 0.
func (s *solver) run() ([]float64, error) {
	if err := s.broken; err != nil {
		s.broken = nil
		return nil, err
	}
	f, failing := s.fails[s.me]
	for ; s.it < s.iters; s.it++ {
		if failing && !f.recovery && !f.sent && f.iter == s.it {
			return nil, fmt.Errorf("rank %d at iteration %d: %w", s.me, s.it, errOnPurpose)
		}
		if s.it%s.every == 0 && s.it > 0 && s.at != s.it {
			if err := s.checkpoint(failing && f.sent && f.iter == s.it); err != nil {
				return nil, err
			}
			s.at = s.it
			if err := s.grow(); err != nil {
				return nil, err
			}
		}
		if err := s.step(); err != nil {
			return nil, err
		}
	}
	return s.gather()
}

// step trades edge points with the neighbors and updates the block.
func (s *solver) step() error {
	r, p := s.comm.Rank(), s.comm.Size()
	left, right := r-1, r+1
	if r == 0 {
		left = meshmpi.ProcNull
	}
	if r == p-1 {
		right = meshmpi.ProcNull
	}
	u, n := s.u, s.count
	var reqs [4]*meshmpi.Request
	var errs [4]error
	reqs[0], errs[0] = meshmpi.Irecv(s.comm, u[n+1:n+2], right, tagLeft) // its first point
	reqs[1], errs[1] = meshmpi.Irecv(s.comm, u[0:1], left, tagRight)     // its last point
	reqs[2], errs[2] = meshmpi.Isend(s.comm, u[1:2], left, tagLeft)
	reqs[3], errs[3] = meshmpi.Isend(s.comm, u[n:n+1], right, tagRight)
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	if err := await(s.comm, reqs[:]...); err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if g := s.first + i - 1; g == 0 || g == s.points-1 {
			s.next[i] = u[i] // the ends keep their temperature
		} else {
			s.next[i] = update(u[i-1], u[i], u[i+1])
		}
	}
	s.u, s.next = s.next, s.u
	return nil
}

// checkpoint stores checkpoint s.it/s.every: the rank's block here and at
// its right neighbor, its left neighbor's block here.
func (s *solver) checkpoint(failAfterSend bool) error {
	k := s.it / s.every
	r, p := s.comm.Rank(), s.comm.Size()
	mine := piece{s.first, slices.Clone(s.u[1 : s.count+1])}
	pieces := []piece{mine}
	if p > 1 {
		right, left := (r+1)%p, (r+p-1)%p
		first, length := split(s.points, p, left)
		theirs := piece{first, make([]float64, length)}
		send, err := meshmpi.Isend(s.comm, mine.data, right, tagCheckpoint)
		if err != nil {
			return err
		}
		if failAfterSend {
			return fmt.Errorf("rank %d at checkpoint %d, its copy sent: %w", s.me, s.it, errOnPurpose)
		}
		recv, err := meshmpi.Irecv(s.comm, theirs.data, left, tagCheckpoint)
		if err != nil {
			return err
		}
		if err := await(s.comm, recv, send); err != nil {
			return err
		}
		pieces = append(pieces, theirs)
	}
	s.saved[k] = append(s.saved[k], pieces...)
	for g := range s.saved {
		if g < k-1 {
			delete(s.saved, g)
		}
	}
	// every rank stored k: none holds k−2 alone
	barrier, err := meshmpi.Ibarrier(s.comm)
	if err != nil {
		return err
	}
	return await(s.comm, barrier)
}

// gather collects the rod (at every rank: rank 0 checks it).
func (s *solver) gather() ([]float64, error) {
	return s.collect([]piece{{s.first, s.u[1 : s.count+1]}})
}

// collect gathers every rank's pieces into the rod, NaN where no rank
// has a piece (the temperatures are never NaN). Each rank contributes
// the rod as it holds it, NaN elsewhere: p copies of the rod, a price a
// small example can pay for the simplest gathering.
func (s *solver) collect(pieces []piece) ([]float64, error) {
	mine := make([]float64, s.points)
	for i := range mine {
		mine[i] = math.NaN()
	}
	for _, pc := range pieces {
		copy(mine[pc.first:], pc.data)
	}
	all := make([]float64, s.comm.Size()*s.points)
	r, err := meshmpi.Iallgather(s.comm, mine, all)
	if err != nil {
		return nil, err
	}
	if err := await(s.comm, r); err != nil {
		return nil, err
	}
	rod := mine
	for i := range rod {
		for c := 0; c < len(all); c += s.points {
			v := all[c+i]
			switch {
			case math.IsNaN(v):
			case math.IsNaN(rod[i]):
				rod[i] = v
			case math.Float64bits(rod[i]) != math.Float64bits(v):
				return nil, fmt.Errorf("two copies of point %d differ: %v and %v", i, rod[i], v)
			}
		}
	}
	return rod, nil
}

// recover makes a communicator of the survivors and rolls back to the
// newest checkpoint they all hold. An error from a failure during it
// is left for the next round: the caller's next operation fails too.
func (s *solver) recover() error {
	if f, ok := s.fails[s.me]; ok && f.recovery {
		return fmt.Errorf("rank %d as its recovery starts: %w", s.me, errOnPurpose)
	}
	old := s.comm
	_ = old.Revoke() // a rank that had finished has not revoked it yet
	c, err := old.Shrink()
	if err != nil {
		return fmt.Errorf("shrink: %w", err)
	}
	s.comm = c
	s.recoveries++
	s.at = -1
	s.shrinkNames(old, c)
	// old is not freed: messages in flight when it was revoked may still
	// arrive, and a freed context id can be reused by a later
	// communicator whose receives would take them (a library bug,
	// TestStaleMessageOnAReusedContext in examples/ulfm_test.go)
	// the newest checkpoint every survivor holds
	mask := 0
	for g := range s.saved {
		mask |= 1 << (g % 30)
	}
	if len(s.saved) == 0 {
		mask = -1 // a joiner not yet checkpointed holds none and vetoes none
	}
	agreed, err := c.Agree(mask)
	if err != nil {
		return s.failLater(err)
	}
	mine := []float64{-1}
	for h := range s.saved {
		if agreed&(1<<(h%30)) != 0 {
			mine[0] = max(mine[0], float64(h))
		}
	}
	// the members that hold checkpoints find the same one; a joiner
	// that holds none learns it (an Allgather: the one collective of
	// float64s the program has already)
	all := make([]float64, c.Size())
	r, err := meshmpi.Iallgather(c, mine, all)
	if err != nil {
		return s.failLater(err)
	}
	if err := await(c, r); err != nil {
		return s.failLater(err)
	}
	g := int(slices.Max(all))
	if g < 0 {
		return fmt.Errorf("no checkpoint is held by every survivor: %w", errLost)
	}
	for h := range s.saved {
		if h > g {
			delete(s.saved, h) // the steps past it are done again, checkpoints too
		}
	}
	rod, err := s.rebuild(g)
	if err != nil {
		return s.failLater(err)
	}
	s.it = g * s.every
	s.place(rod)
	if c.Rank() == 0 {
		fmt.Printf("rank(s) %v failed: %d survivors roll back to iteration %d\n", s.failedNames(), c.Size(), s.it)
	}
	return nil
}

// failLater keeps a failure during the recovery for the next round, in
// which the rank does not run but goes straight to recovery, as the
// others do. Any other error ends the rank.
func (s *solver) failLater(err error) error {
	if failure(err) {
		_ = s.comm.Revoke()
		s.broken = err
		return nil
	}
	return err
}

// shrinkNames keeps the names of old's members that c kept, and adds
// the others' to s.failed.
func (s *solver) shrinkNames(old, c *meshmpi.Comm) {
	og, err := old.Group()
	if err != nil {
		return
	}
	ng, err := c.Group()
	if err != nil {
		return
	}
	ranks := make([]int, c.Size())
	for i := range ranks {
		ranks[i] = i
	}
	kept, err := ng.TranslateRanks(ranks, og)
	if err != nil {
		return
	}
	names := make([]int, len(kept))
	for i, r := range kept {
		names[i] = s.names[r]
	}
	for r, name := range s.names {
		if !slices.Contains(kept, r) {
			s.failed = append(s.failed, name)
		}
	}
	s.names = names
}

// rebuild returns the rod at checkpoint g from the pieces the survivors
// hold, or errLost if some points are held by none.
func (s *solver) rebuild(g int) ([]float64, error) {
	if g == 0 {
		return initialRod(s.points), nil
	}
	rod, err := s.collect(s.saved[g])
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(rod, math.IsNaN); i >= 0 {
		j := i
		for j < s.points && math.IsNaN(rod[j]) {
			j++
		}
		return nil, fmt.Errorf("points %d to %d of iteration %d are held by no survivor: "+
			"the rank that held them and the ring neighbor that held their copy both failed (ranks %v failed): %w",
			i, j-1, g*s.every, s.failedNames(), errLost)
	}
	return rod, nil
}

// check compares the rod with a sequential run, at rank 0.
func (s *solver) check(rod []float64) error {
	if s.comm.Rank() != 0 {
		return nil
	}
	want := initialRod(s.points)
	next := slices.Clone(want)
	for range s.iters {
		for i := 1; i < s.points-1; i++ {
			next[i] = update(want[i-1], want[i], want[i+1])
		}
		want, next = next, want
	}
	diff, differ := 0.0, 0
	for i := range want {
		if math.Float64bits(rod[i]) != math.Float64bits(want[i]) {
			differ++
			diff = max(diff, math.Abs(rod[i]-want[i]))
		}
	}
	failed := s.failedNames()
	fmt.Printf("done on %d ranks: ranks %v failed, %d recoveries\n", s.comm.Size(), failed, s.recoveries)
	if s.joined > 0 {
		fmt.Printf("ranks joined while it ran: %d\n", s.joined)
	}
	if s.done != nil {
		s.done(s.joined, failed)
	}
	fmt.Printf("points that differ from the sequential run: %d (largest difference %g)\n", differ, diff)
	if differ > 0 {
		return fmt.Errorf("%d points differ from the sequential run, by up to %g", differ, diff)
	}
	fmt.Println("ok")
	return nil
}

// failedNames are the names of the members lost so far, world ranks
// first, in order.
func (s *solver) failedNames() []string {
	failed := make([]string, 0, len(s.failed))
	for _, name := range s.failed {
		failed = append(failed, nameOf(name))
	}
	slices.SortFunc(failed, byName)
	return failed
}

// nameOf is a member's name as the report says it: its world rank, or
// j1, j2… for the ranks that joined.
func nameOf(name int) string {
	if name < 0 {
		return "j" + strconv.Itoa(-name)
	}
	return strconv.Itoa(name)
}

// byName orders world ranks by number, then joiners by number.
func byName(a, b string) int {
	key := func(s string) (bool, int) {
		n, _ := strconv.Atoi(strings.TrimPrefix(s, "j"))
		return strings.HasPrefix(s, "j"), n
	}
	ja, na := key(a)
	jb, nb := key(b)
	if ja != jb {
		if ja {
			return 1
		}
		return -1
	}
	return na - nb
}

// parseFails reads -fail: rank:iteration[:sent] or rank:recovery, …
func parseFails(s string) (map[int]failPoint, error) {
	fails := map[int]failPoint{}
	for f := range strings.SplitSeq(s, ",") {
		if f == "" {
			continue
		}
		parts := strings.Split(f, ":")
		rank, err := strconv.Atoi(parts[0])
		if err != nil || rank < 0 || len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("bad -fail %q", f)
		}
		var fp failPoint
		switch it, err := strconv.Atoi(parts[1]); {
		case parts[1] == "recovery" && len(parts) == 2:
			fp.recovery = true
		case err != nil || it < 0 || len(parts) == 3 && parts[2] != "sent":
			return nil, fmt.Errorf("bad -fail %q", f)
		default:
			fp.iter, fp.sent = it, len(parts) == 3
		}
		fails[rank] = fp
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
		fmt.Fprintln(os.Stderr, "resilient:", e)
		if !errors.Is(e, errOnPurpose) {
			status = 1
		}
	}
	if status == 0 && finished == 0 {
		status = 3
	}
	return status
}
