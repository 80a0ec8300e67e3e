//go:build unix

package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// Tolerances of the resource checks (see the package doc, Flat): the
// most a series' drift (drift: the least value of its last third of
// samples minus the least of its first third, at the most common
// live-rank count) may be.
const (
	// goroutineSlack and fdSlack bound the drift of goroutines and open
	// files.
	goroutineSlack = 10
	fdSlack        = 10
	// heapShare bounds a heap's drift, as a share of its first floor
	// (series.base: what the process needs at the start), plus
	// heapFloor (the server's, measured after a GC) or mgrHeapFloor (the
	// manager's, whose figure includes its garbage), plus, for the
	// manager, taskRecord bytes per task done while it was sampled: the
	// farm keeps a bool of every task it ever made (its recorded slice,
	// whose capacity doubles), a cost of the farm's design that grows
	// with the tasks, not with the churn.
	heapShare    = 0.20
	heapFloor    = 1 << 20
	mgrHeapFloor = 2 << 20
	taskRecord   = 2
	// minPoints is the fewest samples a check needs after the warm-up.
	minPoints = 3
)

// result is what a soak saw.
type result struct {
	cfg   config
	seed  uint64
	limit int

	formedAt, churnEnd, mgrEnd, allEnd time.Time

	samples  []sample
	mgrStats []mgrStat
	mgrLines []string

	kills, joins int
	exhausted    bool // the late ranks ran out

	mgrExited bool
	mgrErr    error

	farmOver, noFarm int      // late workers that found the farm over, or never found it (exited 0)
	unexpected       int      // workers that ended otherwise than by exiting 0 or by our kill
	failures         []string // the first keepFailures of them
	hung             []string // killed when the farm did not end in time
	problems         []string // the soak itself could not go on

	taskRecord float64 // the manager's heap allowance for the farm's record of its tasks

	server                           signaling.Stats
	departed, declared, lateDeparted int64
}

// series is one resource over the churn.
type series struct {
	name        string
	bytes       bool
	t, l, y     []float64 // hours since the job formed, live ranks, value
	slope, per  float64   // least squares: per hour (live ranks' part out), per live rank
	growth      float64   // drift: last third's median − first third's
	limit       float64   // of growth
	first, last float64
}

func (x *series) ok() bool { return x.growth <= x.limit }

// analyse fits x and sets its limit.
func (x *series) analyse(limit func(base float64) float64) {
	if len(x.y) == 0 {
		return
	}
	x.slope, x.per = fit(x.t, x.l, x.y)
	x.growth = drift(x.l, x.y)
	x.first, x.last = x.y[0], x.y[len(x.y)-1]
	x.limit = limit(x.base())
}

// allSeries are the six resource series, from the samples after the
// first (warm-up) taken while ranks churned.
func (r *result) allSeries() []*series {
	srvG := &series{name: "server goroutines"}
	srvH := &series{name: "server heap", bytes: true}
	srvF := &series{name: "server fds"}
	mgrG := &series{name: "manager goroutines"}
	mgrH := &series{name: "manager heap", bytes: true}
	mgrF := &series{name: "manager fds"}
	hours := func(at time.Time) float64 { return at.Sub(r.formedAt).Hours() }
	for i, s := range r.samples {
		if i == 0 {
			continue // warm-up
		}
		t, l := hours(s.at), float64(s.conns)
		srvG.add(t, l, float64(s.goroutines))
		srvH.add(t, l, float64(s.heap))
		if s.fds >= 0 {
			srvF.add(t, l, float64(s.fds))
		}
	}
	first := true
	for _, m := range r.mgrStats {
		if m.at.Before(r.formedAt) || (!r.churnEnd.IsZero() && m.at.After(r.churnEnd)) {
			continue
		}
		if first {
			first = false // warm-up
			continue
		}
		t, l := hours(m.at), float64(m.live)
		mgrG.add(t, l, float64(m.goroutines))
		mgrH.add(t, l, float64(m.heap))
		if m.fds >= 0 {
			mgrF.add(t, l, float64(m.fds))
		}
	}
	count := func(slack float64) func(float64) float64 { return func(float64) float64 { return slack } }
	heap := func(floor float64) func(float64) float64 {
		return func(base float64) float64 { return heapShare*base + floor }
	}
	// the farm's record of its tasks, over the part of the churn the
	// manager's samples span
	var record float64
	if churn := r.churnEnd.Sub(r.formedAt).Hours(); len(mgrH.t) > 1 && churn > 0 {
		record = taskRecord * float64(parseFarm(r.mgrLines).tasks) * (mgrH.t[len(mgrH.t)-1] - mgrH.t[0]) / churn
	}
	r.taskRecord = record
	srvG.analyse(count(goroutineSlack))
	srvH.analyse(heap(heapFloor))
	srvF.analyse(count(fdSlack))
	mgrG.analyse(count(goroutineSlack))
	mgrH.analyse(heap(mgrHeapFloor + record))
	mgrF.analyse(count(fdSlack))
	return []*series{srvG, srvH, srvF, mgrG, mgrH, mgrF}
}

// base is the floor of x's first third, as drift takes it: what the
// process held at the start.
func (x *series) base() float64 {
	first, _ := floors(x.l, x.y)
	return first
}

func (x *series) add(t, l, y float64) {
	x.t, x.l, x.y = append(x.t, t), append(x.l, l), append(x.y, y)
}

// farmReport is what the manager's last lines say.
type farmReport struct {
	answer, sequential string
	matched            bool // "ok"
	tasks              int
	lateJoined         int // late workers the manager took
	failed             string
	lateFailed         int
	reassigned         int
	duplicates         int
	found              bool // the report was there
}

var (
	reAnswer  = regexp.MustCompile(`^answer (\S+), sequential (\S+)$`)
	reCount   = regexp.MustCompile(`manager (\d+)|: (\d+)`)
	reLate    = regexp.MustCompile(`(\d+) late workers: \d+`)
	reFailed  = regexp.MustCompile(`^failed workers (\[.*\]), tasks reassigned (\d+), duplicate results ignored (\d+)$`)
	reLateBad = regexp.MustCompile(`^late workers failed (\d+)$`)
)

func parseFarm(lines []string) farmReport {
	var f farmReport
	for _, line := range lines {
		if m := reAnswer.FindStringSubmatch(line); m != nil {
			f.answer, f.sequential, f.found = strings.TrimSuffix(m[1], ","), m[2], true
		}
		if rest, ok := strings.CutPrefix(line, "tasks done by "); ok {
			f.tasks = 0
			for _, m := range reCount.FindAllStringSubmatch(rest, -1) {
				n, _ := strconv.Atoi(m[1] + m[2])
				f.tasks += n
			}
			if m := reLate.FindStringSubmatch(rest); m != nil {
				f.lateJoined, _ = strconv.Atoi(m[1])
			}
		}
		if m := reFailed.FindStringSubmatch(line); m != nil {
			f.failed = m[1]
			f.reassigned, _ = strconv.Atoi(m[2])
			f.duplicates, _ = strconv.Atoi(m[3])
		}
		if m := reLateBad.FindStringSubmatch(line); m != nil {
			f.lateFailed, _ = strconv.Atoi(m[1])
		}
		if line == "ok" {
			f.matched = true
		}
	}
	return f
}

// print writes the samples, the series and the counts.
func (r *result) print(w io.Writer) {
	c := r.cfg
	fmt.Fprintf(w, "meshchurn: %v of churn every ~%v, %d world workers, -work %d, -seed %d, job of up to %d ranks\n",
		c.duration, c.every, c.workers, c.work, r.seed, r.limit)
	if len(r.samples) > 0 {
		fmt.Fprintln(w, "\nsamples (server: this process; manager: rank 0's latest stats line; the first is the warm-up):")
		fmt.Fprintf(w, "%s\n", header)
		for _, s := range r.samples {
			fmt.Fprintln(w, s.row(r.formedAt))
		}
		fmt.Fprintln(w, "\nseries after the warm-up (slope/h and per rank: least squares on time and live ranks; drift: the least")
		fmt.Fprintln(w, "value of the last third of samples − the least of the first third, at the most common live-rank count; checked against limit):")
		fmt.Fprintf(w, "  %-19s %9s %9s %6s %12s %12s %9s %9s  %s\n", "", "first", "last", "n", "slope/h", "per rank", "drift", "limit", "")
		for _, x := range r.allSeries() {
			fmt.Fprintf(w, "  %-19s %9s %9s %6d %12s %12s %9s %9s  %s\n", x.name,
				x.fmt(x.first), x.fmt(x.last), len(x.y), x.fmtSigned(x.slope), x.fmtSigned(x.per), x.fmtSigned(x.growth), x.fmt(x.limit), x.verdict())
		}
		if r.taskRecord > 0 {
			fmt.Fprintf(w, "  (the manager heap's limit includes %s for the farm's record of its tasks, %d bytes a task)\n", mib(r.taskRecord), taskRecord)
		}
	}
	f := parseFarm(r.mgrLines)
	fmt.Fprintf(w, "\nkills %d, joins %d (late workers started)", r.kills, r.joins)
	if r.exhausted {
		fmt.Fprint(w, ", late ranks used up")
	}
	fmt.Fprintf(w, "\nlate workers the manager took %d, of which failed %d; late workers that found the farm over %d, that found none %d\n",
		f.lateJoined, f.lateFailed, r.farmOver, r.noFarm)
	fmt.Fprintf(w, "tasks done %d, failed world workers %s, reassigned %d, duplicates %d\n", f.tasks, orNone(f.failed), f.reassigned, f.duplicates)
	fmt.Fprintf(w, "answer %s, sequential %s: %s\n", orNone(f.answer), orNone(f.sequential), map[bool]string{true: "ok (no task lost)", false: "NOT ok"}[f.matched])
	fmt.Fprintf(w, "server: joins %d (late %d), departures %d (late %d, declared failed %d), relayed %d, connections now %d\n",
		r.server.Joins, r.server.LateJoins, r.departed, r.lateDeparted, r.declared, r.server.Relayed, r.server.Conns)
	if !r.churnEnd.IsZero() && !r.allEnd.IsZero() {
		fmt.Fprint(w, "after the churn: ")
		if !r.mgrEnd.IsZero() {
			fmt.Fprintf(w, "the manager ended in %v, ", r.mgrEnd.Sub(r.churnEnd).Round(time.Millisecond))
		}
		fmt.Fprintf(w, "the last process in %v\n", r.allEnd.Sub(r.churnEnd).Round(time.Millisecond))
	}
	if r.mgrExited && r.mgrErr != nil || !f.matched {
		fmt.Fprintln(w, "the manager's last lines:")
		fmt.Fprintln(w, indent(strings.Join(r.mgrLines[max(0, len(r.mgrLines)-20):], "\n")))
	}
	for _, s := range r.failures {
		fmt.Fprintln(w, "unexpected end:", s)
	}
}

const header = "      time  conns ranks procs  kills joins |  srv gor  srv heap srv fds | mgr live  mgr gor  mgr heap mgr fds"

func (s sample) row(formed time.Time) string {
	mgr := fmt.Sprintf("%8s %8s %9s %7s", "-", "-", "-", "-")
	if !s.mgr.at.IsZero() {
		mgr = fmt.Sprintf("%8d %8d %9s %7d", s.mgr.live, s.mgr.goroutines, mib(float64(s.mgr.heap)), s.mgr.fds)
	}
	return fmt.Sprintf("%10s %6d %5d %5d %6d %5d | %8d %9s %7d | %s",
		s.at.Sub(formed).Round(time.Second), s.conns, s.ranks, s.procs, s.kills, s.joins,
		s.goroutines, mib(float64(s.heap)), s.fds, mgr)
}

func (x *series) fmt(v float64) string {
	if len(x.y) == 0 {
		return "-"
	}
	if x.bytes {
		return mib(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func (x *series) fmtSigned(v float64) string {
	if len(x.y) == 0 {
		return "-"
	}
	if x.bytes {
		return fmt.Sprintf("%+.2fM", v/(1<<20))
	}
	return fmt.Sprintf("%+.1f", v)
}

func (x *series) verdict() string {
	switch {
	case len(x.y) < minPoints:
		return "too few samples"
	case x.ok():
		return "flat"
	}
	return "GROWS"
}

func mib(v float64) string { return fmt.Sprintf("%.2fM", v/(1<<20)) }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// verdict lists the checks that failed; none means the soak passed.
func (r *result) verdict() []string {
	failed := append([]string(nil), r.problems...)
	f := parseFarm(r.mgrLines)
	switch {
	case !r.mgrExited:
		failed = append(failed, "the manager did not end")
	case r.mgrErr != nil:
		failed = append(failed, "the manager "+exitText(r.mgrErr))
	}
	if !f.matched {
		failed = append(failed, "the manager did not print ok (answer ≠ sequential: a task was lost, or no answer)")
	}
	if r.unexpected > 0 {
		failed = append(failed, fmt.Sprintf("%d workers ended otherwise than by exiting 0 or by our kill", r.unexpected))
	}
	if len(r.hung) > 0 {
		failed = append(failed, fmt.Sprintf("still running %v after the churn, killed: %s", r.drainLimit(), strings.Join(r.hung, ", ")))
	}
	if len(r.samples) == 0 {
		return failed // the churn never started: nothing to measure
	}
	for _, x := range r.allSeries() {
		switch {
		case len(x.y) < minPoints:
			if x.name != "server fds" && x.name != "manager fds" || len(x.y) > 0 {
				failed = append(failed, fmt.Sprintf("%s: %d samples after the warm-up, want %d (a longer -duration or a shorter -sample)", x.name, len(x.y), minPoints))
			}
		case !x.ok():
			failed = append(failed, fmt.Sprintf("%s grow: drift %s (slope %s/h), limit %s", x.name, x.fmtSigned(x.growth), x.fmtSigned(x.slope), x.fmt(x.limit)))
		}
	}
	return failed
}
