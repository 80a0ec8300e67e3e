//go:build unix || windows

package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Hang reports on demand. SIGQUIT to meshrun, or --report-hang D when no
// rank wrote a line for D, asks every rank what it is blocked in: meshrun
// sends a native rank process meshmpi.ReportSignal (the ranks get
// meshmpi.EnvReport=1, and meshmpi answers in the rank), and a WASI
// rank's host sends its guest wasm's report message (host.Reports); the
// rank prints the report its --timeout prints, as a line of its standard
// error ("[2] meshmpi: rank 2 is blocked in Recv(from rank 1, tag 7) on
// world: waiting for a message from rank 1"), and carries on. Meshrun
// reads those lines as they pass and, once every rank asked answered or
// after reportWait, says what they add up to: "every rank is blocked in
// meshmpi: a deadlock", or which ranks run, did not answer or cannot be
// asked (a WASI guest that has not said it answers: one built before
// guests did, or one not in its job yet; any native rank where there is
// no signal to ask with).

// reportWait bounds how long meshrun waits for the ranks' answers.
const reportWait = 3 * time.Second

// errNoReportSignal: this platform cannot ask a rank process.
var errNoReportSignal = errors.New("no signal to ask a rank process with")

// reportLine is a rank's answer, as package meshmpi prints it.
var reportLine = regexp.MustCompile(`^meshmpi: rank (\d+) is (blocked in .*|running, not blocked in meshmpi)$`)

// answer is one rank's answer to a report request.
type answer struct {
	r       *rank
	blocked bool
}

// hangWatch is the state of report requests: only supervise's goroutine
// touches it, except answers and lastLine, which the ranks' output
// writers feed.
type hangWatch struct {
	answers  chan answer
	lastLine atomic.Int64 // when a rank last wrote a line that is not an answer, unix nanoseconds

	asked    map[*rank]bool   // ranks asked, whether they answered; nil while no request is open
	blocked  map[*rank]bool   // of those that answered: blocked in meshmpi
	timer    <-chan time.Time // the end of reportWait; nil while no request is open
	noAsk    []string         // ranks that cannot be asked, for the verdict
	noAskWhy []string         // why, in words, each reason once

	idle       *time.Timer // --report-hang's; nil without
	idleFor    time.Duration
	reportedAt int64 // lastLine when --report-hang last asked
}

func newHangWatch(n int, idle time.Duration) *hangWatch {
	h := &hangWatch{answers: make(chan answer, n), idleFor: idle}
	h.lastLine.Store(time.Now().UnixNano())
	if idle > 0 {
		h.idle = time.NewTimer(idle)
	}
	return h
}

// idleC is --report-hang's timer channel, nil without.
func (h *hangWatch) idleC() <-chan time.Time {
	if h.idle == nil {
		return nil
	}
	return h.idle.C
}

// stop stops --report-hang's timer.
func (h *hangWatch) stop() {
	if h.idle != nil {
		h.idle.Stop()
	}
}

// tap returns the function a rank's stderr lineWriter calls with each of
// its lines: it picks out the rank's answers.
func (h *hangWatch) tap(r *rank) func(line []byte) {
	return func(line []byte) {
		if m := reportLine.FindSubmatch(line); m != nil {
			select {
			case h.answers <- answer{r: r, blocked: strings.HasPrefix(string(m[2]), "blocked")}:
			default: // more answers than ranks: a rank printing such lines itself
			}
			return
		}
		h.lastLine.Store(time.Now().UnixNano())
	}
}

// seen is the tap for a rank's stdout: any line is a sign of life.
func (h *hangWatch) seen(line []byte) { h.lastLine.Store(time.Now().UnixNano()) }

// ask asks every running rank for its report; why says who asked.
func (j *job) askReports(why string) {
	h := j.hang
	if h.asked != nil {
		return // a request is open: its verdict comes soon
	}
	h.asked, h.blocked, h.noAsk, h.noAskWhy = map[*rank]bool{}, map[*rank]bool{}, nil, nil
	for _, r := range j.ranks {
		if r.exited {
			continue
		}
		if r.cmd == nil { // a WASI rank: its host asks, if its guest said it answers
			if r.reports == nil || !r.reports.Ask() {
				h.notAsked(r, notAskedWASI)
				continue
			}
			h.asked[r] = false
			continue
		}
		if err := askReport(r.cmd.Process); err != nil {
			j.l.log.Info("asking a rank for its report", "rank", r.label, "err", err)
			h.notAsked(r, err.Error())
			continue
		}
		h.asked[r] = false
	}
	j.l.fail("%s: asking every rank what it is blocked in", why)
	if len(h.asked) == 0 {
		j.reportVerdict()
		return
	}
	h.timer = time.After(reportWait)
}

// notAskedWASI is why a WASI rank was not asked.
const notAskedWASI = "a WASI guest that has not said it answers: built before guests did, or not in the job yet"

// notAsked records that r cannot be asked, and why.
func (h *hangWatch) notAsked(r *rank, why string) {
	h.noAsk = append(h.noAsk, r.label)
	if !slices.Contains(h.noAskWhy, why) {
		h.noAskWhy = append(h.noAskWhy, why)
	}
}

// answered records a rank's answer, and gives the verdict once every
// rank asked answered.
func (j *job) answered(a answer) {
	h := j.hang
	if done, ok := h.asked[a.r]; !ok || done {
		return // not asked (an answer to nobody's question), or twice
	}
	h.asked[a.r] = true
	h.blocked[a.r] = a.blocked
	for _, done := range h.asked {
		if !done {
			return
		}
	}
	j.reportVerdict()
}

// reportVerdict says what the answers add up to, and closes the request.
func (j *job) reportVerdict() {
	h := j.hang
	var blocked, running, silent []string
	for _, r := range j.ranks {
		done, ok := h.asked[r]
		switch {
		case !ok:
		case r.exited:
			// it ended meanwhile: it neither hangs nor runs
		case !done:
			silent = append(silent, r.label)
		case h.blocked[r]:
			blocked = append(blocked, r.label)
		default:
			running = append(running, r.label)
		}
	}
	var parts []string
	switch {
	case len(blocked) > 0 && len(running)+len(silent)+len(h.noAsk) == 0:
		parts = append(parts, "every rank is blocked in meshmpi: a deadlock (or a message no rank sends)")
	case len(blocked) > 0 && len(running)+len(silent) == 0:
		parts = append(parts, fmt.Sprintf("every rank asked is blocked in meshmpi: a deadlock, unless %s (not asked) %s not", ranksWord(h.noAsk), be(h.noAsk)))
	case len(blocked) > 0:
		parts = append(parts, ranksWord(blocked)+" "+be(blocked)+" blocked in meshmpi")
	}
	if len(running) > 0 {
		parts = append(parts, ranksWord(running)+" "+be(running)+" running, not blocked in meshmpi")
	}
	if len(silent) > 0 {
		parts = append(parts, fmt.Sprintf("%s did not answer within %v", ranksWord(silent), reportWait))
	}
	if len(h.noAsk) > 0 && !(len(blocked) > 0 && len(running)+len(silent) == 0) {
		parts = append(parts, ranksWord(h.noAsk)+" cannot be asked ("+strings.Join(h.noAskWhy, "; ")+")")
	}
	if len(parts) == 0 {
		parts = append(parts, "no rank is running")
	}
	j.l.fail("hang report: %s", strings.Join(parts, "; "))
	if len(silent) > 0 || slices.Contains(h.noAskWhy, notAskedWASI) {
		h.reportedAt = 0 // --report-hang asks again after another quiet D: they may not have joined yet
	}
	h.asked, h.blocked, h.timer, h.noAsk, h.noAskWhy = nil, nil, nil, nil, nil
}

// idleCheck is --report-hang's timer: when no rank wrote a line for D,
// it asks, once for each quiet spell, and then waits for the next one.
func (j *job) idleCheck() {
	h := j.hang
	last := h.lastLine.Load()
	quiet := time.Since(time.Unix(0, last))
	switch {
	case last == h.reportedAt: // asked already in this quiet spell
		h.idle.Reset(h.idleFor)
	case quiet >= h.idleFor:
		h.reportedAt = last
		j.askReports(fmt.Sprintf("no rank wrote a line for %v (--report-hang)", quiet.Round(time.Second)))
		h.idle.Reset(h.idleFor)
	default:
		h.idle.Reset(h.idleFor - quiet)
	}
}

func ranksWord(labels []string) string {
	if len(labels) == 1 {
		return "rank " + labels[0]
	}
	return "ranks " + strings.Join(labels, ", ")
}

func be(labels []string) string {
	if len(labels) == 1 {
		return "is"
	}
	return "are"
}
