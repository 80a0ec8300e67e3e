package ranksuite

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/meshmpi/meshmpi"
)

// Modes of a Task.
const (
	ModeSuite = "suite" // Suite, then check the rank holds a direct link to every other
	ModeEcho  = "echo"  // Echo for the driver Peer
	ModeDrive = "drive" // Measure against the Echo rank Peer, print the figures
	ModeAbort = "abort" // after a Barrier rank Peer calls Abort(AbortCode); the others wait in a receive
)

// Task is one rank's part of a job: what Run does. The rank program
// (mixedrank) reads it from its command line; launchers write it there
// with Args.
type Task struct {
	Mode string
	Peer int  // echo, drive: the other rank
	Plan Plan // drive
}

// AbortCode is the code the aborting rank of ModeAbort passes to Abort.
const AbortCode = 5

// Args is the command line that makes the rank program run t.
func (t Task) Args() []string {
	a := []string{"-mode", t.Mode}
	if t.Mode == ModeSuite {
		return a
	}
	a = append(a, "-peer", strconv.Itoa(t.Peer))
	if t.Mode == ModeDrive {
		a = append(a, "-lat", joinInts(t.Plan.LatSizes), "-bw", joinInts(t.Plan.BWSizes),
			"-iters", strconv.Itoa(t.Plan.Iters), "-stream-bytes", strconv.Itoa(t.Plan.StreamBytes),
			"-rounds", strconv.Itoa(t.Plan.Rounds))
	}
	return a
}

// ParseTask reads a Task from a command line that Args wrote.
func ParseTask(args []string) (Task, error) {
	fs := flag.NewFlagSet("mixedrank", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var t Task
	var lat, bw string
	fs.StringVar(&t.Mode, "mode", ModeSuite, "suite, echo or drive")
	fs.IntVar(&t.Peer, "peer", 0, "echo, drive: the other rank")
	fs.StringVar(&lat, "lat", "", "drive: latency sizes in bytes, comma-separated")
	fs.StringVar(&bw, "bw", "", "drive: bandwidth sizes in bytes, comma-separated")
	fs.IntVar(&t.Plan.Iters, "iters", 1000, "drive: round trips of a latency size")
	fs.IntVar(&t.Plan.StreamBytes, "stream-bytes", 16<<20, "drive: bytes a bandwidth size streams per round")
	fs.IntVar(&t.Plan.Rounds, "rounds", 1, "drive: runs of every size, the best kept")
	if err := fs.Parse(args); err != nil {
		return t, fmt.Errorf("%w: %w", err, meshmpi.ErrArg)
	}
	switch t.Mode {
	case ModeSuite, ModeEcho, ModeDrive, ModeAbort:
	default:
		return t, fmt.Errorf("-mode %q: want suite, echo, drive or abort: %w", t.Mode, meshmpi.ErrArg)
	}
	var err error
	if t.Plan.LatSizes, err = parseInts(lat); err != nil {
		return t, err
	}
	t.Plan.BWSizes, err = parseInts(bw)
	return t, err
}

// Run does t as the rank of s, prints what it reports to out, and ends
// the session: Finalize when t succeeded, Abort otherwise (so the other
// ranks see ErrProcFailed instead of waiting for this one).
func Run(s *meshmpi.Session, t Task, out io.Writer) error {
	w := s.World()
	err := func() error {
		switch t.Mode {
		case ModeSuite:
			if err := Suite(w); err != nil {
				return err
			}
			// the suite's all-pairs step spoke to every rank, so a rank
			// that reaches them all directly has a link to each
			if got, want := s.Links(), w.Size()-1; got != want {
				return fmt.Errorf("rank %d holds %d direct links, want one to each of the %d other ranks", w.Rank(), got, want)
			}
			_, err := fmt.Fprintf(out, "ranksuite ok: rank %d of %d, %d direct links\n", w.Rank(), w.Size(), s.Links())
			return err
		case ModeEcho:
			return Echo(w, t.Peer)
		case ModeAbort:
			if err := meshmpi.Barrier(w); err != nil {
				return err
			}
			if w.Rank() == t.Peer {
				w.Abort(AbortCode)
			}
			_, err := meshmpi.Recv(w, make([]byte, 1), meshmpi.AnySource, 0)
			return fmt.Errorf("waiting while rank %d aborts: %w", t.Peer, err)
		case ModeDrive:
			figs, err := Measure(w, t.Peer, t.Plan)
			if err != nil {
				return err
			}
			for _, f := range figs {
				if _, err := fmt.Fprintln(out, f); err != nil {
					return err
				}
			}
			return StopEcho(w, t.Peer)
		}
		return fmt.Errorf("mode %q: %w", t.Mode, meshmpi.ErrArg)
	}()
	if err != nil {
		s.Abort(err)
		return err
	}
	return s.Finalize()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int, error) {
	var v []int
	for f := range strings.SplitSeq(s, ",") {
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("size %q: want a number of bytes: %w", f, meshmpi.ErrArg)
		}
		v = append(v, n)
	}
	return v, nil
}
