//go:build cgo

package abi_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
)

// The same-run comparison of issue 19's latency bar: a C rank's 8 B
// latency against a Go rank's on the same link. Two native C ranks
// (examples/c/osu.c over libmpi_abi.so) and two native Go ranks (this
// test binary, TestOSUGoRank: osu.c's latency loop through the Go API)
// run under meshrun, one pair after the other, in alternating order, so
// both see the same machine load; between processes of one host the mesh
// links them over shared memory. Only series of interleaved runs mean
// anything on a loaded machine, so the test reports medians and asserts
// nothing about time; it runs when asked:
//
//	MESHMPI_OSU_ROUNDS=15 go test -count=1 -v -run '^TestOSULatency$' ./abi
//
// MESHMPI_OSU_SCALE scales osu.c's iterations (default 1: 10,000 round
// trips a run).

// envOSUGo makes TestOSUGoRank a rank: meshrun sets it in the Go pair.
const envOSUGo = "MESHMPI_OSU_GO"

var osuLatency = regexp.MustCompile(`osu: latency 8 B: ([0-9.]+) us`)

// osuRun runs one pair under meshrun and returns rank 0's latency in µs.
func osuRun(t *testing.T, meshrun string, args ...string) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, meshrun, append([]string{"-n", "2"}, args...)...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(c.Args, " "), err, out)
	}
	m := osuLatency.FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s: no latency line in\n%s", strings.Join(c.Args, " "), out)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func TestOSULatency(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("MESHMPI_OSU_ROUNDS"))
	if rounds <= 0 {
		t.Skip("a benchmark series: set MESHMPI_OSU_ROUNDS to run it")
	}
	scale := os.Getenv("MESHMPI_OSU_SCALE")
	if scale == "" {
		scale = "1"
	}
	ts := setup(t)
	osu := compile(t, ts, "osu", "../examples/c/osu.c", "")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pairs := []struct {
		name string
		args []string
	}{
		{"C", []string{osu, scale, "latency"}},
		{"Go", []string{"-x", envOSUGo + "=" + scale, self, "-test.run=^TestOSUGoRank$", "-test.count=1"}},
	}
	got := map[string][]float64{}
	var ratios []float64
	for r := range rounds {
		v := map[string]float64{}
		for i := range pairs {
			p := pairs[(i+r)%2] // alternate which pair goes first
			v[p.name] = osuRun(t, ts.meshrun, p.args...)
			got[p.name] = append(got[p.name], v[p.name])
		}
		ratios = append(ratios, v["C"]/v["Go"])
		t.Logf("round %2d: C %.2f µs, Go %.2f µs, C/Go %.2f", r, v["C"], v["Go"], v["C"]/v["Go"])
	}
	mc, mg := median(got["C"]), median(got["Go"])
	t.Logf("8 B one-way latency, medians of %d interleaved rounds: C %.2f µs (best %.2f), Go %.2f µs (best %.2f); C/Go %.2f (median of the rounds' ratios %.2f)",
		rounds, mc, slices.Min(got["C"]), mg, slices.Min(got["Go"]), mc/mg, median(ratios))
}

// TestOSUGoRank is the Go pair's rank of TestOSULatency: osu.c's latency
// loop (10 warm-up round trips, 10,000 × scale + 10 timed, the byte
// checked) through the Go API, printing osu.c's line.
func TestOSUGoRank(t *testing.T) {
	s := os.Getenv(envOSUGo)
	if s == "" {
		t.Skip("a rank of TestOSULatency's Go pair, started by meshrun")
	}
	scale, err := strconv.ParseFloat(s, 64)
	if err != nil || scale <= 0 {
		scale = 1
	}
	w, err := meshmpi.Init()
	if err != nil {
		t.Fatal(err)
	}
	iters := int(10000*scale) + 10
	small := make([]byte, 8)
	var t0 time.Time
	for i := -10; i < iters; i++ {
		if i == 0 {
			t0 = time.Now()
		}
		switch w.Rank() {
		case 0:
			small[0] = byte(i)
			if err := meshmpi.Send(w, small, 1, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := meshmpi.Recv(w, small, 1, 1); err != nil {
				t.Fatal(err)
			}
			if small[0] != byte(i+1) {
				t.Fatalf("latency: wrong reply %d at %d", small[0], i)
			}
		case 1:
			if _, err := meshmpi.Recv(w, small, 0, 1); err != nil {
				t.Fatal(err)
			}
			small[0]++
			if err := meshmpi.Send(w, small, 0, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	lat := time.Since(t0).Seconds() / float64(iters) / 2 * 1e6
	if w.Rank() == 0 {
		fmt.Printf("osu: latency 8 B: %.2f us\nosu ok\n", lat)
	}
	if err := meshmpi.Finalize(); err != nil {
		t.Fatal(err)
	}
}
