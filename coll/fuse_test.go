package coll_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

func countKind(p *coll.Plan, k coll.StepKind) int {
	n := 0
	for _, s := range p.Steps {
		if s.Kind == k {
			n++
		}
	}
	return n
}

// A receive into scratch and the reduce of exactly that scratch become one
// fused step when nothing else can tell; the receive's place becomes a
// no-op that waits for the fused step.
func TestFuseRecvReduce(t *testing.T) {
	s := coll.Ref{Buf: coll.BufScratch, Len: 8}
	dst := coll.Ref{Buf: coll.BufRecv, Len: 8}
	for _, tc := range []struct {
		name  string
		build func(b *coll.Builder)
		fused int
	}{
		{"receive then reduce", func(b *coll.Builder) {
			b.Scratch(8)
			v := b.Recv(1, s)
			b.Reduce(s, dst, v)
		}, 1},
		{"the reduce waits for local work too", func(b *coll.Builder) {
			b.Scratch(8)
			c := b.Copy(coll.Ref{Buf: coll.BufSend, Len: 8}, dst)
			v := b.Recv(1, s)
			b.Reduce(s, dst, v, c)
		}, 1},
		{"the reduce waits for a send: posting late could deadlock a ring", func(b *coll.Builder) {
			b.Scratch(8)
			w := b.Send(2, dst)
			v := b.Recv(1, s)
			b.Reduce(s, dst, v, w)
		}, 0},
		{"another step reads what was received", func(b *coll.Builder) {
			b.Scratch(8)
			v := b.Recv(1, s)
			b.Send(2, s, v)
			b.Reduce(s, dst, v)
		}, 0},
		{"a later round reuses the scratch after the reduce", func(b *coll.Builder) {
			b.Scratch(8)
			v := b.Recv(1, s)
			r := b.Reduce(s, dst, v)
			v2 := b.Recv(2, s, r)
			b.Reduce(s, coll.Ref{Buf: coll.BufRecv, Off: 8, Len: 8}, v2)
		}, 2},
		{"an unordered receive from the same peer", func(b *coll.Builder) {
			b.Scratch(16)
			v := b.Recv(1, s)
			b.Recv(1, coll.Ref{Buf: coll.BufScratch, Off: 8, Len: 8})
			b.Reduce(s, dst, v)
		}, 0},
		{"a reduce of a part of what was received", func(b *coll.Builder) {
			b.Scratch(16)
			v := b.Recv(1, coll.Ref{Buf: coll.BufScratch, Len: 16})
			b.Reduce(s, dst, v)
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := coll.NewBuilder(op.Sum, op.Int64)
			tc.build(b)
			p, err := b.Plan("t")
			require.NoError(t, err)
			require.Equal(t, tc.fused, countKind(p, coll.StepRecvReduce))
		})
	}
}

// The algorithms whose shape allows it get fused steps (the kept half of a
// recursive halving, a pairwise exchange's block); the sweeps run every
// plan through the static checks and both ways of executing them.
// Others keep theirs apart on purpose: recursive doubling reduces into
// the buffer a send of the same round still reads, and a binomial reduce
// folds into the received slot (the message is the right operand).
func TestAlgorithmsFuse(t *testing.T) {
	fused := map[string]int{}
	for _, c := range []coll.Coll{coll.Reduce, coll.Allreduce, coll.ReduceScatterBlock, coll.Scan} {
		for _, alg := range coll.Algorithms(c) {
			a := coll.Args{Coll: c, Rank: 0, Size: 5, Count: 1000, ElemSize: 8, Type: op.Float64, Op: op.Sum}
			p, err := coll.Build(alg, &a)
			if err != nil {
				continue // restrictions
			}
			fused[fmt.Sprintf("%s/%s", c, alg.Name)] = countKind(p, coll.StepRecvReduce)
		}
	}
	t.Logf("fused receive-reduce steps at rank 0 of 5: %v", fused)
	require.Positive(t, fused["allreduce/rabenseifner"])
	require.Positive(t, fused["reduce_scatter_block/pairwise"])
	require.Zero(t, fused["allreduce/recursive_doubling"], "its reduce waits for a send")
}

// ReduceScatterBlock's recursive_halving reduces what it receives as it
// lands wherever its shape allows: in every halving round after the first
// (the first receives into the accumulator and reduces the input in, no
// copy either), and in the last round straight into the receive buffer,
// so the reduced block is not copied out of scratch afterwards. At 2 ranks,
// the 1 MiB case of issue 20, that is a copy of the kept half into the
// receive buffer and one fused receive-reduce.
func TestReduceScatterBlockFuses(t *testing.T) {
	alg, ok := algorithmNamed(coll.ReduceScatterBlock, "recursive_halving")
	require.True(t, ok)
	for _, c := range []struct{ size, fused int }{{2, 1}, {4, 1}, {8, 2}, {16, 3}} {
		for rank := range c.size {
			a := coll.Args{Coll: coll.ReduceScatterBlock, Rank: rank, Size: c.size, Count: 1001, ElemSize: 8, Type: op.Float64, Op: op.Sum}
			p, err := coll.Build(alg, &a)
			require.NoError(t, err)
			require.Equal(t, c.fused, countKind(p, coll.StepRecvReduce), "size %d rank %d: fused steps", c.size, rank)
			intoRecv := 0
			for _, s := range p.Steps {
				if s.Kind == coll.StepRecvReduce && s.B.Buf == coll.BufRecv {
					intoRecv++
				}
			}
			require.Equal(t, 1, intoRecv, "size %d rank %d: the last fold lands in the receive buffer", c.size, rank)
		}
	}
}

func algorithmNamed(c coll.Coll, name string) (coll.Algorithm, bool) {
	for _, a := range coll.Algorithms(c) {
		if a.Name == name {
			return a, true
		}
	}
	return coll.Algorithm{}, false
}
