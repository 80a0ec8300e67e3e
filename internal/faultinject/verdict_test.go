//go:build unix

package faultinject

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestULFMRoundLine(t *testing.T) {
	for _, r := range []ULFMRound{
		{Round: 0, Agreed: ULFMFlag(0, 0), Group: []int{0}},
		{Round: 5, Agreed: 0, ProcFailed: true, Group: []int{0, 2, 3}},
		{Round: 12, Agreed: 1<<62 | 7, Group: []int{1, 3}},
		{Round: 2, Agreed: 3, Group: []int{0, 1, 2}, Connected: "true"},
		{Round: 8, Agreed: 3, ProcFailed: true, Group: []int{0, 2}, Connected: "false"},
	} {
		got, err := ParseULFMRound(r.String())
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
	for _, bad := range []string{"round x", "round 1 agreed=zz procfailed=false group=1", "round 1 agreed=0x1 procfailed=maybe group=1", "round 1 agreed=0x1 procfailed=false group=1,a", "round 1 agreed=0x1 procfailed=false group=1", "round 1 agreed=0x1 procfailed=false group=1 connected=maybe"} {
		_, err := ParseULFMRound(bad)
		require.Error(t, err, bad)
	}
}

func TestULFMFlagAndRevoker(t *testing.T) {
	seen := map[int]bool{}
	for rank := range 8 {
		for k := range 8 {
			f := ULFMFlag(rank, k)
			require.GreaterOrEqual(t, f, 0)
			require.False(t, seen[f], "rank %d round %d repeats a flag", rank, k)
			seen[f] = true
		}
	}
	// the AND of 4 ranks' flags keeps bits
	and := -1
	for rank := range 4 {
		and &= ULFMFlag(rank, 3)
	}
	require.NotZero(t, and)
	for n := 1; n < 6; n++ {
		for k := range 10 {
			rank, ok := ULFMRevoker(k, n)
			require.Equal(t, k%3 == 1, ok)
			require.Less(t, rank, n)
		}
	}
}

func TestRandomULFMPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	where := map[string]int{}
	for range 2000 {
		p := RandomULFMPlan(rng, []Mode{Native, WASI, Mixed}, 3)
		require.True(t, p.ULFM())
		require.Less(t, p.Victim, p.Ranks)
		require.Less(t, p.Round, 3)
		if p.Step == StepRevoke {
			_, ok := ULFMRevoker(p.Round, p.Ranks)
			require.True(t, ok, "%s: a revoke step in a round without one", p)
		}
		if p.Step == StepConnect {
			require.True(t, ULFMConnects(p.Round, p.Ranks-1), "%s: a connect step in a round without one", p)
		}
		where[string(p.Mode)+" "+string(p.Kind)+" "+p.Where()]++
	}
	require.Len(t, where, 3*2*6, "every mode, fault and step: %v", where)
}

// ulfmResult is a 4-rank native kill of rank 2 in round 1's agree whose
// survivors printed lines, exited with status, and whose meshrun
// reported report.
func ulfmResult(lines map[int][]string, status map[int]int, report ...string) Result {
	r := Result{
		Plan:       Plan{Mode: Native, Kind: Kill, Phase: Op, Ranks: 4, Victim: 2, Op: ULFMOp, Rounds: 2, Round: 1, Step: StepAgree},
		Faulted:    true,
		Struck:     Op,
		Survivors:  map[int]Exit{},
		RoundLines: lines,
		Report:     report,
		Meshruns:   []MeshrunExit{{Status: 0}},
	}
	for rank, s := range status {
		r.Survivors[rank] = Exit{Status: s}
	}
	return r
}

func TestVerdict(t *testing.T) {
	and := func(k int, ranks ...int) int {
		v := -1
		for _, r := range ranks {
			v &= ULFMFlag(r, k)
		}
		return v
	}
	r0 := ULFMRound{Round: 0, Agreed: and(0, 0, 1, 2, 3), Group: []int{0, 1, 2, 3}}.String()
	r1 := ULFMRound{Round: 1, Agreed: and(1, 0, 1, 3), ProcFailed: true, Group: []int{0, 1, 3}}.String()
	good := map[int][]string{0: {r0, r1}, 1: {r0, r1}, 3: {r0, r1}}
	ok := map[int]int{0: 0, 1: 0, 3: 0}
	listed := "meshrun: rank 2 failed: was killed by signal 9 (killed)"

	r := ulfmResult(good, ok, listed)
	require.Empty(t, r.Failed())

	// the meshrun's report must list the victim
	r = ulfmResult(good, ok, "meshrun: rank 2 exited with status 137")
	require.Contains(t, r.Failed(), "no meshrun lists rank 2 as failed")

	// a survivor that saw another value
	other := ULFMRound{Round: 1, Agreed: and(1, 0, 1, 2, 3), ProcFailed: true, Group: []int{0, 1, 3}}.String()
	r = ulfmResult(map[int][]string{0: {r0, r1}, 1: {r0, other}, 3: {r0, r1}}, ok, listed)
	require.Len(t, r.Verdict().Disagreements, 1)
	require.Contains(t, r.Failed(), "disagreement: round 1: rank 1")

	// the same line on every survivor, but without a survivor's flag or
	// without a survivor in the group
	noFlag := ULFMRound{Round: 1, Agreed: and(1, 0, 1), Group: []int{0, 1, 3}}.String()
	if and(1, 0, 1)&ULFMFlag(3, 1) == and(1, 0, 1) {
		t.Fatal("the flags do not tell rank 3's contribution")
	}
	r = ulfmResult(map[int][]string{0: {r0, noFlag}, 1: {r0, noFlag}, 3: {r0, noFlag}}, ok, listed)
	require.Contains(t, r.Failed(), "lacks")
	noMember := ULFMRound{Round: 1, Agreed: and(1, 0, 1, 3), Group: []int{0, 1}}.String()
	r = ulfmResult(map[int][]string{0: {r0, noMember}, 1: {r0, noMember}, 3: {r0, noMember}}, ok, listed)
	require.Contains(t, r.Failed(), "survivor 3 is not in the shrunk group")

	// a survivor that failed, or stopped short
	r = ulfmResult(map[int][]string{0: {r0, r1}, 1: {r0}, 3: {r0, r1}}, map[int]int{0: 0, 1: 1, 3: 0}, listed)
	v := r.Verdict()
	require.Equal(t, []string{"rank 1 exited with status 1"}, v.Unrecovered)
	require.Equal(t, []string{"rank 1 printed 1 of 2 rounds"}, v.Incomplete)
	require.Empty(t, v.Disagreements)

	// meshrun's exit status is the survivors' result
	r = ulfmResult(good, ok, listed)
	r.Meshruns[0].Status = 1
	require.Contains(t, r.Failed(), "exited with status 1, want 0")

	// a victim killed after it left the job cleanly is a survivor to
	// meshrun, with the kill's status
	r = ulfmResult(good, ok)
	r.Phase, r.Struck, r.Missed, r.VictimLeft, r.VictimStatus = Finalize, Finalize, true, true, 137
	r.Meshruns[0].Status = 137
	require.Empty(t, r.Failed())

	// a formation fault that failed the job: every survivor errs, none
	// got a round
	r = ulfmResult(map[int][]string{}, map[int]int{0: 1, 1: 1, 3: 1}, listed)
	r.Phase, r.Struck = Formation, Formation
	require.True(t, r.Verdict().NotFormed)
	require.Empty(t, r.Failed())
	// … but not when one of them got past Init
	r.Ready = map[int]bool{0: true}
	require.False(t, r.Verdict().NotFormed)
	require.NotEmpty(t, r.Failed())

	// a hang is a hang
	r = ulfmResult(good, map[int]int{0: 0, 3: 0}, listed)
	r.Hung = true
	require.Contains(t, r.Failed(), "hang: rank(s) [1]")

	var sum Summary
	sum.Add(ulfmResult(good, ok, listed))
	sum.Add(ulfmResult(map[int][]string{0: {r0, r1}, 1: {r0, other}, 3: {r0, r1}}, ok, listed))
	require.Equal(t, 2, sum.ULFM.Runs)
	require.Equal(t, 1, sum.ULFM.Passed)
	require.Equal(t, 1, sum.ULFM.Disagreements)
	require.Equal(t, 2, sum.ULFM.Where["native kill agree"])
}
