package main

// Growing: ranks that join the running job (a volunteer's tab, a
// rebooted board) are admitted at checkpoints, MPI's way (MPI-4.1
// §11.8): the leader (rank 0 of the current communicator) publishes a
// port and accepts joiners on its own communicator in the background;
// each accepted joiner waits, bridged to the leader, until a checkpoint
// admits it. There every member agrees whether the leader holds one;
// if so, the members and the joiner make an intercommunicator over the
// bridge (IntercommCreate), merge it, agree whether every member got the
// grown communicator, and then the rod is split anew over it.
//
// Admission is fault tolerant the ULFM way: the verdict is an Agree over
// the old communicator, so every surviving member takes the same one;
// the leader tells it to the joiner over the bridge. A verdict that
// fails (a member or the joiner failed during admission) is recovered
// from like any failure: the members shrink and roll back, and the
// joiner knocks again. A joiner that loses the leader after admission
// started cannot know the verdict, so it leaves the job with an error: a
// fail-stop failure the members, if they had admitted it, recover from.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi"
)

// service is the name the leader publishes its port under.
const service = "resilient"

const (
	tagGo      = 10 // leader → joiner on the bridge: admit now (1), or the job is over (0)
	tagVerdict = 11 // leader → joiner: whether every member made the grown communicator (1)
	tagCreate  = 12 // IntercommCreate's, over the bridge
)

// errNotAdmitted is a failed admission the joiner may try again after.
var errNotAdmitted = errors.New("not admitted")

// errRecover says that the members agreed to recover, in the agreement
// at a checkpoint (grow): a member whose checkpoint failed met it with
// the main loop's agreement, whose flag lacks atCheckpoint.
var errRecover = errors.New("a member failed: recovering")

// atCheckpoint is the bit of a checkpoint's agreement flag that only the
// members at the checkpoint set (the main loop's done flag is 0 or 1);
// bit 0 is the leader's: it holds a joiner.
const atCheckpoint = 2

// door is the leader's open port and the joiners waiting at it, each as
// a bridge: a communicator of the leader (rank 0) and the joiner (1).
type door struct {
	self    *meshmpi.Comm
	port    string
	waiting chan *meshmpi.Comm // closed once the port is
	held    *meshmpi.Comm      // taken from waiting, not admitted yet
	once    sync.Once
}

// openDoor opens the leader's port and publishes it, in place of a
// leader's before it that failed. A world without a name service
// (Init's one process) takes no joiners: the door stays shut.
func (s *solver) openDoor() {
	if s.door != nil || s.noDoor {
		return
	}
	self := s.comm.Self()
	port, err := self.OpenPort()
	if err == nil {
		_ = s.comm.UnpublishName(service, "") // a failed leader's
		if err = s.comm.PublishName(service, port); err != nil {
			_ = self.ClosePort(port)
		}
	}
	if err != nil {
		s.noDoor = true
		if !errors.Is(err, meshmpi.ErrNotSupported) {
			fmt.Printf("taking no joiners: %v\n", err)
		}
		return
	}
	d := &door{self: self, port: port, waiting: make(chan *meshmpi.Comm, 64)}
	go func() {
		defer close(d.waiting)
		for {
			inter, err := self.Accept(port, 0)
			if err != nil {
				return // the port closed
			}
			bridge, err := inter.IntercommMerge(false)
			if err != nil {
				continue // the joiner failed: it knocks again, or not
			}
			d.waiting <- bridge
		}
	}()
	s.door = d
}

// next returns a waiting joiner's bridge, waiting for one until wait
// ends if want; nil if none.
func (d *door) next(want bool, wait time.Duration) *meshmpi.Comm {
	if b := d.held; b != nil {
		return b
	}
	var timeout <-chan time.Time
	if want {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case b := <-d.waiting:
		d.held = b
		return b
	default:
	}
	if timeout == nil {
		return nil
	}
	select {
	case b := <-d.waiting:
		d.held = b
	case <-timeout:
	}
	return d.held
}

// shut unpublishes and closes the port and, if tell, tells the joiners
// waiting that the job is over.
func (d *door) shut(c *meshmpi.Comm, tell bool) {
	if d == nil {
		return
	}
	d.once.Do(func() {
		_ = c.UnpublishName(service, d.port)
		_ = d.self.ClosePort(d.port)
		over := []float64{0}
		if !tell {
			return
		}
		if d.held != nil {
			_ = meshmpi.Send(d.held, over, 1, tagGo)
		}
		for b := range d.waiting {
			_ = meshmpi.Send(b, over, 1, tagGo)
		}
	})
}

// grow admits a joiner if the leader holds one; every member of s.comm
// calls it at the same checkpoint. A failed admission is a failure
// (ErrProcFailed) the caller recovers from.
func (s *solver) grow() error {
	c := s.comm
	var bridge *meshmpi.Comm
	if c.Rank() == 0 {
		s.openDoor()
		if s.door != nil {
			bridge = s.door.next(s.joined < s.await, s.wait)
		}
	}
	// A member whose checkpoint failed (the barrier failed there, not
	// everywhere) is in the main loop's agreement, which this one meets:
	// its flag lacks atCheckpoint, and every member recovers, as it does.
	v, err := c.Agree(atCheckpoint | boolInt(bridge != nil || c.Rank() != 0)) // the leader's bit decides
	if err != nil || v&atCheckpoint == 0 {
		return fmt.Errorf("at the checkpoint of iteration %d: %w", s.it, errRecover)
	}
	if v&1 == 0 {
		return nil
	}
	if bridge != nil {
		s.door.held = nil // admitted or not, this bridge is done
		if err := meshmpi.Send(bridge, []float64{1}, 1, tagGo); err != nil {
			bridge = nil // the joiner failed: IntercommCreate tells the members
		}
	}
	inter, err := meshmpi.IntercommCreate(c, 0, bridge, 1, tagCreate)
	var grown *meshmpi.Comm
	if err == nil {
		grown, err = inter.IntercommMerge(false)
	}
	v, aerr := c.Agree(boolInt(err == nil))
	admitted := aerr == nil && v == 1
	if bridge != nil {
		_ = meshmpi.Send(bridge, []float64{float64(boolInt(admitted))}, 1, tagVerdict)
	}
	if !admitted {
		for _, x := range []*meshmpi.Comm{grown, inter} {
			if x != nil {
				_ = x.Revoke()
			}
		}
		return fmt.Errorf("admitting a joiner: %w", errors.Join(err, aerr, meshmpi.ErrProcFailed))
	}
	s.comm = grown
	return s.share()
}

// share gives the grown communicator's members the job's state and
// splits the rod over them: rank 0 tells the iteration and the
// settings, every member contributes its block, and a checkpoint on the
// new split gives every block its copy at once.
func (s *solver) share() error {
	c := s.comm
	// the state, then the old members' names: float64s, the type the
	// rest of the program sends (a collective of another element type
	// would add its code to the browser build)
	state := make([]float64, 6+c.Size()-1)
	if c.Rank() == 0 {
		copy(state, []float64{float64(s.it), float64(s.points), float64(s.iters), float64(s.every), float64(s.recoveries), float64(s.joined + 1)})
		for i, name := range s.names {
			state[6+i] = float64(name)
		}
	}
	r, err := meshmpi.Ibcast(c, state, 0)
	if err != nil {
		return err
	}
	if err := await(c, r); err != nil {
		return err
	}
	s.it, s.points, s.iters, s.every, s.recoveries, s.joined = int(state[0]), int(state[1]), int(state[2]), int(state[3]), int(state[4]), int(state[5])
	s.names = s.names[:0]
	for _, name := range state[6:] {
		s.names = append(s.names, int(name))
	}
	s.names = append(s.names, -s.joined)
	var mine []piece
	if s.u != nil {
		mine = []piece{{s.first, s.u[1 : s.count+1]}}
	}
	rod, err := s.collect(mine)
	if err != nil {
		return err
	}
	s.place(rod)
	s.at = s.it // the checkpoint below is this iteration's
	if c.Rank() == 0 {
		fmt.Printf("a rank joined at iteration %d: %d ranks go on\n", s.it, c.Size())
	}
	return s.checkpoint(false)
}

// join is a rank that joins the running job: it finds the leader's port
// (looking for up to wait), waits at the door until a checkpoint admits
// it, and then runs as a member; nil and a word if there was no job to
// join, or it ended first.
func join(world *meshmpi.Comm, s *solver, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for {
		bridge, err := knock(world, deadline)
		if err != nil || bridge == nil {
			return false, err
		}
		word := []float64{0}
		if _, err := meshmpi.Recv(bridge, word, 0, tagGo); err != nil {
			continue // the leader failed before admitting this rank: knock again
		}
		if word[0] == 0 {
			fmt.Println("the job ended before this rank was admitted")
			return false, nil
		}
		grown, err := enter(world, bridge)
		if errors.Is(err, errNotAdmitted) {
			continue
		}
		if err != nil {
			return false, err
		}
		s.comm = grown
		return true, nil
	}
}

// knock finds the leader's port and connects to it; nil once deadline
// passed with no job to join.
func knock(world *meshmpi.Comm, deadline time.Time) (*meshmpi.Comm, error) {
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		port, err := world.LookupName(ctx, service)
		cancel()
		if err != nil && time.Now().After(deadline) {
			fmt.Println("no job to join: nothing published as", service)
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("looking for the job: %w", err)
		}
		inter, err := world.Self().Connect(port, 0)
		var bridge *meshmpi.Comm
		if err == nil {
			if bridge, err = inter.IntercommMerge(true); err == nil {
				return bridge, nil
			}
		}
		// the port was a failed leader's, or closed, or the leader failed
		// as it took this rank: nothing counted this rank in yet, and the
		// leader's successor publishes its own port at the next
		// checkpoint, so look again
		if time.Now().After(deadline) {
			fmt.Println("no job to join:", err)
			return nil, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// enter is the joiner's side of grow. It returns errNotAdmitted when the
// members' verdict says no (it may knock again), and any other error
// when it cannot know the verdict: then it must leave the job.
func enter(world, bridge *meshmpi.Comm) (*meshmpi.Comm, error) {
	var mu sync.Mutex
	var made []*meshmpi.Comm // inter, grown as they come
	abandoned := false
	done := make(chan error, 1)
	hold := func(c *meshmpi.Comm) bool {
		mu.Lock()
		defer mu.Unlock()
		made = append(made, c)
		if abandoned {
			_ = c.Revoke()
		}
		return !abandoned
	}
	go func() {
		inter, err := meshmpi.IntercommCreate(world.Self(), 0, bridge, 0, tagCreate)
		if err == nil && hold(inter) {
			var grown *meshmpi.Comm
			if grown, err = inter.IntercommMerge(true); err == nil {
				hold(grown)
			}
		}
		done <- err
	}()
	verdict := []float64{0}
	if _, err := meshmpi.Recv(bridge, verdict, 0, tagVerdict); err != nil {
		return nil, fmt.Errorf("the leader failed as it admitted this rank (leaving: the members may count it in): %w", err)
	}
	if verdict[0] == 0 {
		mu.Lock()
		abandoned = true
		for _, c := range append(made, bridge) {
			_ = c.Revoke()
		}
		mu.Unlock()
		<-done
		return nil, errNotAdmitted
	}
	if err := <-done; err != nil {
		return nil, fmt.Errorf("admitted, but this rank's side failed (leaving): %w", err)
	}
	return made[len(made)-1], nil
}
