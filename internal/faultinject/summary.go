//go:build unix

package faultinject

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Summary counts runs and collects the time from fault to last survivor
// exit. The counts above ULFM are of the other runs; ulfm runs (judged by
// the fault-tolerant contract, Result.Verdict) have counts of their own.
type Summary struct {
	Runs    int // results added
	Errors  int // runs that could not be made (Result.Err)
	Missed  int // the victim had ended before the fault
	Hangs   int
	Silent  int // runs with a survivor that ended without an error and no excuse
	Excused int // finalize runs whose survivors may have succeeded, and did
	Named   int // faulted native runs whose meshrun report names the victim
	Native  int // faulted native runs (the ones meshrun's report can name the victim in)
	// ULFM counts the ulfm runs.
	ULFM ULFMSummary
	// Lasts are the fault → last survivor exit times by "kind phase",
	// and for ulfm runs by "ulfm kind step" (formation, revoke, agree,
	// shrink, finalize).
	Lasts map[string][]time.Duration
	// Failures are one line per failed run.
	Failures []string
}

// Add counts r.
func (s *Summary) Add(r Result) {
	if s.Lasts == nil {
		s.Lasts = map[string][]time.Duration{}
	}
	s.Runs++
	if f := r.Failed(); f != "" {
		s.Failures = append(s.Failures, r.Plan.String()+": "+f)
	}
	if r.Plan.ULFM() {
		s.addULFM(r)
		return
	}
	switch {
	case r.Err != nil:
		s.Errors++
		return
	case r.Missed:
		s.Missed++
		return
	case r.Hung:
		s.Hangs++
	case r.Excused() && len(r.WithoutError()) > 0:
		s.Excused++
	case len(r.WithoutError()) > 0:
		s.Silent++
	}
	if r.Mode == Native {
		s.Native++
		if r.NamesVictim() {
			s.Named++
		}
	}
	key := string(r.Kind) + " " + string(r.Struck)
	s.Lasts[key] = append(s.Lasts[key], r.LastExit)
	s.Lasts[string(r.Kind)] = append(s.Lasts[string(r.Kind)], r.LastExit)
}

// ULFMSummary counts ulfm runs.
type ULFMSummary struct {
	Runs          int            // results added
	Errors        int            // runs that could not be made
	Hangs         int            // runs with a survivor still running at the hang limit
	Disagreements int            // runs whose survivors disagreed on a round, or whose round broke the contract
	Unrecovered   int            // runs with a survivor that did not exit 0 or did not print every round
	Meshrun       int            // runs whose meshruns exited nonzero or did not list a native victim as failed
	NotFormed     int            // formation faults that failed the job (accepted)
	Missed        int            // the victim had ended before the fault
	Passed        int            // runs by the fault-tolerant contract
	Where         map[string]int // runs made, by "mode kind where" (Plan.Where, the step struck)
}

func (s *Summary) addULFM(r Result) {
	u := &s.ULFM
	if u.Where == nil {
		u.Where = map[string]int{}
	}
	u.Runs++
	if r.Err != nil {
		u.Errors++
		return
	}
	where := r.Plan.Where() // the step struck, for the rounds
	if r.Faulted && r.Struck != r.Phase {
		where = string(r.Struck) // a formation fault after the job formed
	}
	u.Where[string(r.Mode)+" "+string(r.Kind)+" "+where]++
	if r.Hung {
		u.Hangs++
	} else {
		v := r.Verdict()
		switch {
		case v.NotFormed:
			u.NotFormed++
		case r.Missed:
			u.Missed++
		}
		if len(v.Disagreements) > 0 {
			u.Disagreements++
		}
		if len(v.Unrecovered)+len(v.Incomplete) > 0 {
			u.Unrecovered++
		}
		if len(v.Meshrun) > 0 {
			u.Meshrun++
		}
		if v.ok() {
			u.Passed++
		}
	}
	if r.Faulted && !r.Missed {
		key := "ulfm " + string(r.Kind) + " " + where
		s.Lasts[key] = append(s.Lasts[key], r.LastExit)
		s.Lasts["ulfm "+string(r.Kind)] = append(s.Lasts["ulfm "+string(r.Kind)], r.LastExit)
	}
}

// Quantile is the q-quantile (nearest rank) of ds; 0 when empty.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// WriteTo prints the summary.
func (s *Summary) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	if other := s.Runs - s.ULFM.Runs; other > 0 {
		fmt.Fprintf(&b, "runs %d: hangs %d, survivors without error %d, finalize runs where survivors finished %d, victim gone before the fault %d, runs not made %d\n",
			other, s.Hangs, s.Silent, s.Excused, s.Missed, s.Errors)
		fmt.Fprintf(&b, "meshrun's report names the victim in %d of %d native runs\n", s.Named, s.Native)
	}
	if u := s.ULFM; u.Runs > 0 {
		fmt.Fprintf(&b, "ulfm runs %d: hangs %d, disagreements %d, survivors not recovered %d, meshrun exit/report wrong %d; passed %d (of which the job never formed %d, victim gone before the fault %d); runs not made %d\n",
			u.Runs, u.Hangs, u.Disagreements, u.Unrecovered, u.Meshrun, u.Passed, u.NotFormed, u.Missed, u.Errors)
		wheres := make([]string, 0, len(u.Where))
		for k := range u.Where {
			wheres = append(wheres, k)
		}
		sort.Strings(wheres)
		fmt.Fprintf(&b, "ulfm runs by mode, fault and step struck:\n")
		for _, k := range wheres {
			fmt.Fprintf(&b, "  %-28s %d\n", k, u.Where[k])
		}
	}
	keys := make([]string, 0, len(s.Lasts))
	for k := range s.Lasts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(&b, "fault → last survivor exit:\n")
	for _, k := range keys {
		ds := s.Lasts[k]
		over := 0
		for _, d := range ds {
			if d > 10*time.Second {
				over++
			}
		}
		fmt.Fprintf(&b, "  %-24s n=%-4d p50 %-8v p99 %-8v max %-8v over 10 s: %d\n", k, len(ds),
			Quantile(ds, 0.5).Round(time.Millisecond), Quantile(ds, 0.99).Round(time.Millisecond),
			Quantile(ds, 1).Round(time.Millisecond), over)
	}
	for _, f := range s.Failures {
		fmt.Fprintf(&b, "FAILED %s\n", f)
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}
