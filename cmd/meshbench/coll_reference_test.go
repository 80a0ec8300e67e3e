//go:build !js && !wasip1

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixedReference writes a script that prints what run.sh prints (the
// figures fixed: 0.5 µs per rank of the world for every test and size,
// twice that for Open MPI), for the parts of -mode coll that are
// meshbench's own: running the reference on each rank count in every
// round, reading its lines and comparing medians.
func fixedReference(t *testing.T) string {
	t.Helper()
	script := `np=$1; impl=$2
[ "$3" = shm ] || exit 2
f=$(awk "BEGIN{print 0.5*$np*(\"$impl\"==\"openmpi\"?2:1)}")
echo "# lib: a fixed reference"
echo "R $impl $np barrier 0 $f $f $f 100"
for t in bcast reduce allreduce allgather alltoall iallreduce pallreduce; do
  for s in 8 1024; do echo "R $impl $np $t $s $f $f $f 100"; done
done
echo "R $impl $np pingpong 8 0.4 0.4 0.4 100"
`
	p := filepath.Join(t.TempDir(), "run.sh")
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	return p
}

func TestCollReference(t *testing.T) {
	ref := fixedReference(t)
	tables := meshbench(t, "-mode", "coll", "-ranks", "2,3", "-sizes", "8", "-colls", "barrier,bcast,scan",
		"-forms", "blocking,nonblocking", "-iters", "200", "-mpich", ref, "-openmpi", "-rounds", "2")
	rounds := titled(tables, "# every round's figures")
	require.Len(t, rounds, 1)
	require.Equal(t, []string{"Round", "Impl", "Coll", "Form", "Ranks", "Size", "us"}, rounds[0].columns())
	checkTable(t, rounds[0], 7, 0, 4, 5, 6)
	require.Len(t, rounds[0].rows, 2*(12+2*4), "every figure of both rounds: 12 of meshmpi's, 4 of each reference's")
	tb := titled(tables, "# meshmpi (memory links, in process) vs [mpich openmpi]")
	require.Len(t, tb, 1)
	require.Equal(t, []string{"Coll", "Ranks", "Form", "Size", "meshmpi", "mpich", "openmpi", "Ratio"}, tb[0].columns())
	var got []string
	for _, row := range tb[0].rows {
		require.Len(t, row, 8)
		got = append(got, strings.Join(row[:4], " "))
		m := number(t, row[4])
		require.Positive(t, m)
		if row[0] == "scan" || row[2] == "nonblocking" {
			// the reference has no such test
			require.Equal(t, []string{"-", "-", "-"}, row[5:], "%q", row)
			continue
		}
		np := number(t, row[1])
		require.Equal(t, fmt.Sprintf("%.2f", 0.5*np), row[5])
		require.Equal(t, fmt.Sprintf("%.2f", np), row[6])
		require.InDelta(t, m/(0.5*np), number(t, row[7]), 0.01, "the ratio is to the better reference")
	}
	require.Equal(t, []string{
		"barrier 2 blocking 0", "barrier 2 nonblocking 0",
		"bcast 2 blocking 8", "bcast 2 nonblocking 8",
		"scan 2 blocking 8", "scan 2 nonblocking 8",
		"barrier 3 blocking 0", "barrier 3 nonblocking 0",
		"bcast 3 blocking 8", "bcast 3 nonblocking 8",
		"scan 3 blocking 8", "scan 3 nonblocking 8",
	}, got)
}

// A reference that fails or prints nothing fails the run, saying so.
func TestCollReferenceFails(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{
		"fails.sh":  "echo 'E: Unable to locate package mpich' >&2; exit 100\n",
		"silent.sh": "echo '# lib: nothing measured'\n",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
		cfg, err := parseArgs([]string{"-mode", "coll", "-ranks", "2", "-sizes", "8", "-colls", "bcast",
			"-forms", "blocking", "-iters", "100", "-mpich", p, "-rounds", "1"}, os.Stderr)
		require.NoError(t, err)
		var out strings.Builder
		err = run(&out, cfg)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), p)
		if name == "fails.sh" {
			require.Contains(t, err.Error(), "Unable to locate package mpich")
		}
	}
}
