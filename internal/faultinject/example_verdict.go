//go:build unix

package faultinject

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ExampleVerdict is what is wrong with an example run by the
// fault-tolerant contract: every survivor exits 0 by itself (within the
// hang limit, the Result's Hung); a rank prints "ok" (rank 0 of the
// survivors: after rank 0's loss, another rank than 0); the example's
// own check passed (resilient: no point differs from the sequential run;
// farm: the answer is the sequential one); the example lists no rank as
// failed but the victim; the survivors' meshruns exit 0 and the meshrun
// that hosted a native victim lists it as failed, unless the fault
// missed (Result.Missed: the victim had ended, or the computation was
// over).
//
// The example need not list the victim: a rank struck after its last
// exchange (in Finalize) has lost the others nothing. Recovered says
// whether it did.
type ExampleVerdict struct {
	// Unrecovered lists the survivors that did not exit 0 by
	// themselves, and a missing "ok" or check line.
	Unrecovered []string
	// WrongAnswer is the example's check that failed.
	WrongAnswer []string
	// Misreported lists the ranks the example calls failed that were
	// not struck.
	Misreported []string
	// Meshrun lists what is wrong with the meshruns' exits and reports.
	Meshrun []string
	// Recovered: the example lists the victim as failed (it met the
	// fault and recovered from it).
	Recovered bool
}

// ok reports whether the verdict finds nothing wrong.
func (v ExampleVerdict) ok() bool {
	return len(v.Unrecovered)+len(v.WrongAnswer)+len(v.Misreported)+len(v.Meshrun) == 0
}

func (v ExampleVerdict) String() string {
	var parts []string
	add := func(what string, items []string) {
		if len(items) > 0 {
			parts = append(parts, what+": "+strings.Join(items, "; "))
		}
	}
	add("wrong answer", v.WrongAnswer)
	add("survivors that did not recover", v.Unrecovered)
	add("failed ranks misreported", v.Misreported)
	add("meshrun", v.Meshrun)
	return strings.Join(parts, " | ")
}

var (
	// Every example's last line, by rank 0 of the survivors.
	exampleOK = regexp.MustCompile(`^\[(\d+)\] ok$`)
	// resilient's check, and the members it lost ("done on 4 ranks:
	// ranks [0 3] failed, 2 recoveries"; joiners are j1, j2 …).
	resilientDiffer = regexp.MustCompile(`^\[(\d+)\] points that differ from the sequential run: (\d+) `)
	resilientDone   = regexp.MustCompile(`^\[(\d+)\] done on \d+ ranks: ranks \[([^\]]*)\] failed, `)
	resilientRoll   = regexp.MustCompile(`^\[(\d+)\] rank\(s\) \[([^\]]*)\] failed: `)
	// farm's check, and the workers it lost.
	farmAnswer = regexp.MustCompile(`^\[(\d+)\] answer (0x[0-9a-f]+), sequential (0x[0-9a-f]+)$`)
	farmFailed = regexp.MustCompile(`^\[(\d+)\] failed workers \[([^\]]*)\], `)
)

// ExampleVerdict judges an example run that was made and did not hang.
func (r Result) ExampleVerdict() ExampleVerdict {
	var v ExampleVerdict
	for _, s := range r.survivors() {
		e, ok := r.Survivors[s]
		switch {
		case !ok:
			v.Unrecovered = append(v.Unrecovered, fmt.Sprintf("rank %d did not end", s))
		case e.Stopped:
			v.Unrecovered = append(v.Unrecovered, fmt.Sprintf("rank %d was stopped by meshrun (status %d)", s, e.Status))
		case e.Status != 0:
			v.Unrecovered = append(v.Unrecovered, fmt.Sprintf("rank %d exited with status %d", s, e.Status))
		}
	}
	var okLine, checked bool
	var failed []string // ranks the example lists as failed
	for _, line := range r.Output {
		if exampleOK.MatchString(line) {
			okLine = true
		}
		switch r.Op {
		case Resilient:
			if m := resilientDiffer.FindStringSubmatch(line); m != nil {
				checked = true
				if m[2] != "0" {
					v.WrongAnswer = append(v.WrongAnswer, fmt.Sprintf("rank %s: %s points differ from the sequential run", m[1], m[2]))
				}
			}
			if m := resilientDone.FindStringSubmatch(line); m != nil {
				failed = append(failed, strings.Fields(m[2])...)
			}
			if m := resilientRoll.FindStringSubmatch(line); m != nil {
				failed = append(failed, strings.Fields(m[2])...)
			}
		case Farm:
			if m := farmAnswer.FindStringSubmatch(line); m != nil {
				checked = true
				if m[2] != m[3] {
					v.WrongAnswer = append(v.WrongAnswer, fmt.Sprintf("rank %s: the answer %s, the sequential %s", m[1], m[2], m[3]))
				}
			}
			if m := farmFailed.FindStringSubmatch(line); m != nil {
				failed = append(failed, strings.Fields(m[2])...)
			}
		}
	}
	if !checked {
		v.Unrecovered = append(v.Unrecovered, "no rank printed the check against the sequential run")
	}
	if !okLine {
		v.Unrecovered = append(v.Unrecovered, `no rank printed "ok"`)
	}
	victim := strconv.Itoa(r.Victim)
	slices.Sort(failed)
	for _, f := range slices.Compact(failed) {
		if f == victim {
			v.Recovered = true
		} else {
			v.Misreported = append(v.Misreported, fmt.Sprintf("rank %s listed as failed, rank %s was struck", f, victim))
		}
	}
	v.Meshrun = r.meshrunFaults()
	return v
}

// exampleFailed is Failed for an example run.
func (r Result) exampleFailed() string {
	switch {
	case r.Err != nil:
		return "run: " + r.Err.Error()
	case r.Hung:
		return r.hang()
	}
	if v := r.ExampleVerdict(); !v.ok() {
		return v.String()
	}
	return ""
}
