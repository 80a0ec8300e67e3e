package faultinject

import (
	"fmt"
	"strconv"
	"strings"
)

// The ulfm workload (ULFMOp) runs rounds of recovery on a communicator c,
// the world at first, with meshrun --keep-going, and every rank can
// recompute what each round does:
//
//  1. In the rounds ULFMRevoker picks, one rank of c revokes it and the
//     others wait in an AnySource receive that only the revocation
//     (ErrRevoked) or a failure (ErrProcFailed, ErrProcFailedPending)
//     ends.
//  2. In the rounds ULFMConnects picks, c's ranks split in two halves
//     by parity; the even half accepts on a port of c's rank 0, the odd
//     half connects to it, and the two merge (Accept, Connect,
//     IntercommMerge). A failure during it may end it with an error at
//     some ranks and not others: an Agree on c after the connection, and
//     another after the merge, make every survivor print the same
//     outcome (connected).
//  3. v, err := c.Agree(ULFMFlag(world rank, round)).
//  4. s, err := c.Shrink(); the old c is freed (not the world); c = s.
//
// Before each step every rank prints "fi step ROUND STEP" (the harness
// strikes the victim there), and after the round "fi round ROUND …"
// (ULFMRound): the agreed value, whether Agree reported ErrProcFailed,
// and the shrunk group as world ranks. Every survivor must print the
// same line for every round.

// ULFMOp is the workload's operation of rounds of Revoke, Accept/Connect,
// Agree and Shrink.
const ULFMOp = "ulfm"

// The steps of a ulfm round, in order.
const (
	StepRevoke  = "revoke"
	StepConnect = "connect"
	StepAgree   = "agree"
	StepShrink  = "shrink"
)

// ULFMConnects reports whether round k connects two halves of its
// communicator, of size n: every third round from the third.
func ULFMConnects(k, n int) bool { return k%3 == 2 && n >= 2 }

// ULFMRevoker reports whether round k revokes its communicator, of size
// n, and which of its ranks calls Revoke: every third round from the
// second, by a rank that moves on each time.
func ULFMRevoker(k, n int) (rank int, ok bool) {
	if k%3 != 1 {
		return 0, false
	}
	return (k / 3) % n, true
}

// ULFMFlag is world rank's flag for Agree in round k: about three bits in
// four set, so the AND of a few ranks' flags keeps bits of each, and
// different for every rank and round (splitmix64 of both), so an agreed
// value that left a contribution out shows.
func ULFMFlag(rank, k int) int {
	x := uint64(rank)<<32 | uint64(k)
	return int((splitmix64(x) | splitmix64(^x)) >> 1) // ≥ 0 on every GOARCH's 64-bit int
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// ULFMRound is what a survivor got in one round of the ulfm workload.
type ULFMRound struct {
	Round      int
	Agreed     int   // Agree's value
	ProcFailed bool  // Agree reported ErrProcFailed
	Group      []int // the shrunk communicator's ranks as world ranks, in its order
	// Connected is the connect step's agreed outcome: "true" or "false",
	// "-" in a round without one.
	Connected string
}

// String is the round's line after "fi ", as the workload prints it:
//
//	round 2 agreed=0x1a2b procfailed=true group=0,1,3 connected=true
func (r ULFMRound) String() string {
	g := make([]string, len(r.Group))
	for i, w := range r.Group {
		g[i] = strconv.Itoa(w)
	}
	connected := r.Connected
	if connected == "" {
		connected = "-"
	}
	return fmt.Sprintf("round %d agreed=%#x procfailed=%t group=%s connected=%s", r.Round, r.Agreed, r.ProcFailed, strings.Join(g, ","), connected)
}

// ParseULFMRound parses ULFMRound.String's line.
func ParseULFMRound(s string) (ULFMRound, error) {
	var r ULFMRound
	var agreed, failed, group string
	if _, err := fmt.Sscanf(s, "round %d agreed=%s procfailed=%s group=%s connected=%s", &r.Round, &agreed, &failed, &group, &r.Connected); err != nil {
		return r, fmt.Errorf("ulfm round line %q: %w", s, err)
	}
	switch r.Connected {
	case "true", "false":
	case "-":
		r.Connected = ""
	default:
		return r, fmt.Errorf("ulfm round line %q: connected: %q", s, r.Connected)
	}
	v, err := strconv.ParseUint(agreed, 0, 64)
	if err != nil {
		return r, fmt.Errorf("ulfm round line %q: agreed: %w", s, err)
	}
	r.Agreed = int(v)
	if r.ProcFailed, err = strconv.ParseBool(failed); err != nil {
		return r, fmt.Errorf("ulfm round line %q: procfailed: %w", s, err)
	}
	for _, f := range strings.Split(group, ",") {
		w, err := strconv.Atoi(f)
		if err != nil {
			return r, fmt.Errorf("ulfm round line %q: group: %w", s, err)
		}
		r.Group = append(r.Group, w)
	}
	return r, nil
}
