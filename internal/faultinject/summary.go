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
// the fault-tolerant contract, Result.Verdict) and example runs
// (Result.ExampleVerdict) have counts of their own.
type Summary struct {
	Runs    int // results added
	Errors  int // runs that could not be made (Result.Err)
	Missed  int // the victim had ended before the fault
	Hangs   int
	Silent  int // runs with a survivor that ended without an error and no excuse
	Excused int // finalize runs whose survivors may have succeeded, and did
	Named   int // faulted native runs whose meshrun report names the victim
	Native  int // faulted native runs (the ones meshrun's report can name the victim in)
	// ULFM counts the ulfm runs, Examples the example runs.
	ULFM     ULFMSummary
	Examples ExampleSummary
	// Lasts are the fault → last survivor exit times by "kind phase",
	// for ulfm runs by "ulfm kind step" (formation, revoke, agree,
	// shrink, finalize), and for example runs by "example kind" (the
	// example computes on after the fault: the time to its end).
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
	if r.Plan.Example() {
		s.addExample(r)
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

// ExampleSummary counts example runs.
type ExampleSummary struct {
	Runs         int // results added
	Errors       int // runs that could not be made
	Hangs        int // runs with a survivor still running at the hang limit
	WrongAnswers int // runs whose example's check against the sequential run failed
	Unrecovered  int // runs with a survivor that did not exit 0, or without "ok"
	Misreported  int // runs whose example listed a rank as failed that was not struck
	Meshrun      int // runs whose meshruns exited nonzero or did not list a native victim as failed
	Missed       int // the victim or the computation had ended before the fault
	Recovered    int // runs whose example listed the victim as failed
	Passed       int // runs by the fault-tolerant contract
	// Where counts the runs made by "mode kind example".
	Where map[string]int
	// Jobs are the times from rank 0's first line to the last
	// survivor's exit, by "example mode" for the runs whose fault
	// missed (unfaulted) and by "example mode kind" for the others.
	Jobs map[string][]time.Duration
}

// Failed is the number of example runs that failed.
func (e ExampleSummary) Failed() int {
	return e.Runs - e.Passed
}

func (s *Summary) addExample(r Result) {
	e := &s.Examples
	if e.Where == nil {
		e.Where, e.Jobs = map[string]int{}, map[string][]time.Duration{}
	}
	e.Runs++
	if r.Err != nil {
		e.Errors++
		return
	}
	e.Where[string(r.Mode)+" "+string(r.Kind)+" "+r.Op]++
	if r.Hung {
		e.Hangs++
	} else {
		v := r.ExampleVerdict()
		if r.Missed {
			e.Missed++
		}
		if v.Recovered {
			e.Recovered++
		}
		if len(v.WrongAnswer) > 0 {
			e.WrongAnswers++
		}
		if len(v.Unrecovered) > 0 {
			e.Unrecovered++
		}
		if len(v.Misreported) > 0 {
			e.Misreported++
		}
		if len(v.Meshrun) > 0 {
			e.Meshrun++
		}
		if v.ok() {
			e.Passed++
		}
	}
	if r.Job > 0 {
		key := r.Op + " " + string(r.Mode)
		if !r.Missed {
			key += " " + string(r.Kind)
		}
		e.Jobs[key] = append(e.Jobs[key], r.Job)
	}
	if r.Faulted && !r.Missed && !r.Hung {
		key := r.Op + " " + string(r.Kind)
		s.Lasts[key] = append(s.Lasts[key], r.LastExit)
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
	if other := s.Runs - s.ULFM.Runs - s.Examples.Runs; other > 0 {
		fmt.Fprintf(&b, "runs %d: hangs %d, survivors without error %d, finalize runs where survivors finished %d, victim gone before the fault %d, runs not made %d\n",
			other, s.Hangs, s.Silent, s.Excused, s.Missed, s.Errors)
		fmt.Fprintf(&b, "meshrun's report names the victim in %d of %d native runs\n", s.Named, s.Native)
	}
	if u := s.ULFM; u.Runs > 0 {
		fmt.Fprintf(&b, "ulfm runs %d: hangs %d, disagreements %d, survivors not recovered %d, meshrun exit/report wrong %d; passed %d (of which the job never formed %d, victim gone before the fault %d); runs not made %d\n",
			u.Runs, u.Hangs, u.Disagreements, u.Unrecovered, u.Meshrun, u.Passed, u.NotFormed, u.Missed, u.Errors)
		fmt.Fprintf(&b, "ulfm runs by mode, fault and step struck:\n")
		for _, k := range sortedKeys(u.Where) {
			fmt.Fprintf(&b, "  %-28s %d\n", k, u.Where[k])
		}
	}
	if e := s.Examples; e.Runs > 0 {
		fmt.Fprintf(&b, "example runs %d: passed %d, failed %d (hangs %d, wrong answers %d, survivors not recovered %d, failed ranks misreported %d, meshrun exit/report wrong %d, runs not made %d); victim gone or computation over before the fault %d; example reported the victim failed %d\n",
			e.Runs, e.Passed, e.Failed(), e.Hangs, e.WrongAnswers, e.Unrecovered, e.Misreported, e.Meshrun, e.Errors, e.Missed, e.Recovered)
		fmt.Fprintf(&b, "example runs by mode, fault and example:\n")
		for _, k := range sortedKeys(e.Where) {
			fmt.Fprintf(&b, "  %-28s %d\n", k, e.Where[k])
		}
		fmt.Fprintf(&b, "example job time, rank 0's first line → last survivor exit (missed: unfaulted):\n")
		for _, k := range sortedKeys(e.Jobs) {
			ds := e.Jobs[k]
			fmt.Fprintf(&b, "  %-24s n=%-4d p50 %-8v p99 %-8v max %v\n", k, len(ds),
				Quantile(ds, 0.5).Round(time.Millisecond), Quantile(ds, 0.99).Round(time.Millisecond), Quantile(ds, 1).Round(time.Millisecond))
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

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
