//go:build unix

package faultinject

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ULFMVerdict is what is wrong with a ulfm run by the fault-tolerant
// contract: every survivor exits 0 by itself (within the hang limit, the
// Result's Hung), having printed every round; for each round every
// survivor printed the same line, whose agreed value holds every
// survivor's flag and whose shrunk group holds every survivor; the
// survivors' meshruns exit 0, and the meshrun that hosted a native victim
// lists it as failed.
//
// A fault that struck while the job formed may fail the job instead
// (Init returns an error on every rank: a job that has not formed cannot
// shrink): that is accepted when every survivor ended with an error of its
// own and none got past Init (printed "fi ready").
type ULFMVerdict struct {
	// NotFormed: the fault struck during formation and the job never
	// formed; every survivor ended with an error (accepted).
	NotFormed bool
	// Unrecovered lists the survivors that did not exit 0 by themselves.
	Unrecovered []string
	// Incomplete lists the survivors that did not print every round.
	Incomplete []string
	// Disagreements says, per round, how the survivors' lines differ
	// from each other or from the contract (a value without a survivor's
	// flag, a group without a survivor).
	Disagreements []string
	// Meshrun lists what is wrong with the meshruns' exits and reports.
	Meshrun []string
}

// ok reports whether the verdict finds nothing wrong.
func (v ULFMVerdict) ok() bool {
	return len(v.Unrecovered)+len(v.Incomplete)+len(v.Disagreements)+len(v.Meshrun) == 0
}

func (v ULFMVerdict) String() string {
	var parts []string
	add := func(what string, items []string) {
		if len(items) > 0 {
			parts = append(parts, what+": "+strings.Join(items, "; "))
		}
	}
	add("disagreement", v.Disagreements)
	add("survivors that did not recover", v.Unrecovered)
	add("survivors that did not print every round", v.Incomplete)
	add("meshrun", v.Meshrun)
	return strings.Join(parts, " | ")
}

// survivors returns the ranks other than the victim.
func (r Result) survivors() []int {
	var ranks []int
	for rank := range r.Ranks {
		if rank != r.Victim {
			ranks = append(ranks, rank)
		}
	}
	return ranks
}

// Verdict judges a ulfm run that was made and did not hang.
func (r Result) Verdict() ULFMVerdict {
	var v ULFMVerdict
	survivors := r.survivors()
	if r.Struck == Formation && !r.Missed {
		formed := false
		for _, s := range survivors {
			if r.Ready[s] || !r.Survivors[s].Errored() {
				formed = true
			}
		}
		if !formed {
			v.NotFormed = true
			return v
		}
	}
	for _, s := range survivors {
		e, ok := r.Survivors[s]
		switch {
		case !ok:
			v.Unrecovered = append(v.Unrecovered, fmt.Sprintf("rank %d did not end", s))
		case e.Stopped:
			v.Unrecovered = append(v.Unrecovered, fmt.Sprintf("rank %d was stopped by meshrun (status %d)", s, e.Status))
		case e.Status != 0:
			v.Unrecovered = append(v.Unrecovered, fmt.Sprintf("rank %d exited with status %d", s, e.Status))
		}
		if n := len(r.RoundLines[s]); n != r.Plan.Rounds {
			v.Incomplete = append(v.Incomplete, fmt.Sprintf("rank %d printed %d of %d rounds", s, n, r.Plan.Rounds))
		}
	}
	v.Disagreements = r.disagreements(survivors)
	v.Meshrun = r.meshrunFaults()
	return v
}

// disagreements compares the survivors' lines round by round, and checks
// the common line against every survivor's flag and membership.
func (r Result) disagreements(survivors []int) []string {
	var out []string
	for k := range r.Plan.Rounds {
		var line string
		var by []int // the survivors that printed line
		differ := false
		for _, s := range survivors {
			if k >= len(r.RoundLines[s]) {
				continue // Incomplete says so
			}
			switch l := r.RoundLines[s][k]; {
			case line == "":
				line, by = l, []int{s}
			case l == line:
				by = append(by, s)
			default:
				differ = true
				out = append(out, fmt.Sprintf("round %d: rank %d printed %q, rank(s) %v %q", k, s, l, by, line))
			}
		}
		if line == "" || differ {
			continue
		}
		got, err := ParseULFMRound(line)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		if got.Round != k {
			out = append(out, fmt.Sprintf("round %d: the survivors' round line is for round %d", k, got.Round))
		}
		for _, s := range survivors {
			if f := ULFMFlag(s, k); got.Agreed&f != got.Agreed {
				out = append(out, fmt.Sprintf("round %d: agreed %#x has bits rank %d's flag %#x lacks", k, got.Agreed, s, f))
			}
			if !slices.Contains(got.Group, s) {
				out = append(out, fmt.Sprintf("round %d: survivor %d is not in the shrunk group %v", k, s, got.Group))
			}
		}
	}
	return out
}

// meshrunFaults checks the meshruns' exits: each that hosted a survivor
// exits 0 (the program's own result under --keep-going), and the one
// that hosted a native victim (meshrun -n N's, or the victim's own join
// in a mixed job) lists it as failed. A WASI victim's meshrun is the
// process the fault struck: none is left to list it. A victim that had
// left the job cleanly before the fault is no failure to meshrun -n N:
// it is a survivor, and its status (the fault's) is meshrun's.
func (r Result) meshrunFaults() []string {
	var out []string
	for _, m := range r.Meshruns {
		want := 0
		if m.Ranks == nil && r.VictimLeft {
			want = max(want, r.VictimStatus)
		}
		hostsSurvivor := m.Ranks == nil || slices.ContainsFunc(m.Ranks, func(rank int) bool { return rank != r.Victim })
		if hostsSurvivor && m.Status != want {
			out = append(out, fmt.Sprintf("the meshrun of rank(s) %s exited with status %d, want %d", ranksOf(m.Ranks), m.Status, want))
		}
	}
	if r.Missed || r.Victim < r.WASI {
		return out
	}
	if !r.ListsVictimFailed() {
		out = append(out, fmt.Sprintf("no meshrun lists rank %d as failed", r.Victim))
	}
	return out
}

// ListsVictimFailed reports whether a meshrun's --keep-going report lists
// the victim as failed ("meshrun: rank 2 failed: …").
func (r Result) ListsVictimFailed() bool {
	prefix := "meshrun: rank " + strconv.Itoa(r.Victim) + " failed: "
	return slices.ContainsFunc(r.Report, func(line string) bool { return strings.HasPrefix(line, prefix) })
}

func ranksOf(ranks []int) string {
	if ranks == nil {
		return "all"
	}
	return fmt.Sprint(ranks)
}

// ulfmFailed is Failed for a ulfm run.
func (r Result) ulfmFailed() string {
	switch {
	case r.Err != nil:
		return "run: " + r.Err.Error()
	case r.Hung:
		return r.hang()
	}
	if v := r.Verdict(); !v.ok() {
		return v.String()
	}
	return ""
}

// hang is Failed's line for a hung ulfm or example run: the survivors
// that had not ended.
func (r Result) hang() string {
	var ranks []int
	for _, s := range r.survivors() {
		if _, ok := r.Survivors[s]; !ok {
			ranks = append(ranks, s)
		}
	}
	return fmt.Sprintf("hang: rank(s) %v still running %v after the fault", ranks, r.LastExit.Round(time.Millisecond))
}
