package colltest

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
)

// Affine is an associative, non-commutative user op on uint64 elements,
// each the affine map x → m·x + c packed as m<<32 | c (mod 2³²): the
// composition of the lower rank's map with the higher one's. A schedule
// that reduces out of rank order gets a different answer.
var Affine = op.New("affine", false, func(in, inout []uint64) {
	for i, b := range inout {
		a := in[i]
		m1, c1, m2, c2 := a>>32, a&0xffffffff, b>>32, b&0xffffffff
		inout[i] = (m1*m2&0xffffffff)<<32 | (c1*m2+c2)&0xffffffff
	}
})

// Case is one point of a sweep.
type Case struct {
	Coll    coll.Coll
	Size    int
	Count   int
	Root    int
	Op      *op.Op  // reductions only; default Sum
	Type    op.Type // default Int64 (Uint64 for Affine)
	InPlace bool
	Segment int
}

func (c Case) String() string {
	s := fmt.Sprintf("%s/n=%d/count=%d/root=%d", c.Coll, c.Size, c.Count, c.Root)
	if c.Op != nil {
		s += "/" + c.Op.Name() + "/" + c.Type.String()
	}
	if c.InPlace {
		s += "/inplace"
	}
	if c.Segment > 0 {
		s += fmt.Sprintf("/seg=%d", c.Segment)
	}
	return s
}

// vcount is the deterministic, uneven count rank k has in a v-collective
// of nominal count c (including zeros).
func vcount(c, k int) int { return max(0, c+k%3-1) }

// Args returns every rank's arguments for the case.
func (c Case) Args() []coll.Args {
	if c.Coll.Reduces() && c.Op == nil {
		c.Op = op.Sum
	}
	if c.Type == op.Invalid {
		c.Type = op.Int64
		if c.Op == Affine {
			c.Type = op.Uint64
		}
	}
	args := make([]coll.Args, c.Size)
	for r := range args {
		a := coll.Args{Coll: c.Coll, Rank: r, Size: c.Size, Root: c.Root, Count: c.Count,
			ElemSize: c.Type.Size(), Type: c.Type, Op: c.Op, InPlace: c.InPlace, Segment: c.Segment}
		if c.Coll.Rooted() && r != c.Root {
			a.InPlace = false // only the root of a rooted collective passes in place
		}
		if !c.Coll.Reduces() {
			a.Op = nil
		}
		switch c.Coll {
		case coll.Gatherv, coll.Scatterv, coll.Allgatherv, coll.ReduceScatter:
			a.Counts = make([]int, c.Size)
			a.Displs = make([]int, c.Size)
			off := 0
			for k := range c.Size {
				a.Counts[k] = vcount(c.Count, k)
				a.Displs[k] = off + 1 // a gap before every block
				off += a.Counts[k] + 1
			}
			if c.Coll == coll.ReduceScatter {
				a.Displs = nil
			}
		case coll.Alltoallv:
			// rank k sends vcount(c.Count, k+j) elements to rank j
			a.Counts, a.Displs = make([]int, c.Size), make([]int, c.Size)
			a.SendCounts, a.SendDispls = make([]int, c.Size), make([]int, c.Size)
			roff, soff := 0, 0
			for k := range c.Size {
				a.Counts[k], a.Displs[k] = vcount(c.Count, k+r), roff+1
				roff += a.Counts[k] + 1
				a.SendCounts[k], a.SendDispls[k] = vcount(c.Count, r+k), soff
				soff += a.SendCounts[k]
			}
		}
		args[r] = a
	}
	return args
}

// extent returns the elements a buffer laid out by counts and displs spans.
func extent(counts, displs []int) int {
	n := 0
	for k := range counts {
		n = max(n, displs[k]+counts[k])
	}
	return n
}

// Buffers returns rank r's send and receive buffers sized for the call,
// the send data and the receive buffer's prior contents unique per rank and
// element (Gloo's fixture), so a block landing in the wrong place shows.
func Buffers(args []coll.Args, r, seed int) (send, recv []byte) {
	a := args[r]
	n, size := a.Count, a.Size
	var sn, rn int // elements
	switch a.Coll {
	case coll.Barrier:
	case coll.Bcast:
		rn = n
	case coll.Gather:
		sn, rn = n, n*size
	case coll.Scatter:
		sn, rn = n*size, n
	case coll.Allgather, coll.Alltoall:
		sn, rn = n, n*size
		if a.Coll == coll.Alltoall {
			sn = n * size
		}
	case coll.Gatherv, coll.Allgatherv:
		sn, rn = a.Counts[r], extent(a.Counts, a.Displs)
	case coll.Scatterv:
		sn, rn = extent(a.Counts, a.Displs), a.Counts[r]
	case coll.Alltoallv:
		sn, rn = extent(a.SendCounts, a.SendDispls), extent(a.Counts, a.Displs)
	case coll.Reduce, coll.Allreduce, coll.Scan, coll.Exscan:
		sn, rn = n, n
	case coll.ReduceScatterBlock:
		sn, rn = n*size, n
	case coll.ReduceScatter:
		for _, c := range a.Counts {
			sn += c
		}
		rn = a.Counts[r]
	}
	if a.InPlace {
		switch a.Coll {
		case coll.Scatter, coll.Scatterv: // the root keeps its block in the send buffer
			return value(a, r, seed, 0, sn), nil
		case coll.ReduceScatter, coll.ReduceScatterBlock: // the whole input is in recv
			return nil, value(a, r, seed, 0, sn)
		}
		return nil, value(a, r, seed, 0, rn) // the input is where the output goes
	}
	return value(a, r, seed, 0, sn), value(a, r, seed, 1, rn)
}

// value fills n elements with values unique to (rank, seed, which, index),
// valid for every op in the sweep: small enough that Prod and the logical
// ops stay meaningful, different per rank and position.
func value(a coll.Args, r, seed, which, n int) []byte {
	b := make([]byte, n*a.ElemSize)
	for i := range n {
		v := uint64(r+1)*1000003 + uint64(seed)*7919 + uint64(which)*104729 + uint64(i)*31
		if a.Op == op.Prod {
			v = uint64(1 + (r+i+seed)%3) // products of many ranks stay exact
		}
		if a.Op == Affine {
			v = (v%5+1)<<32 | v%1000
		}
		put(a.Type, b[i*a.ElemSize:], v)
	}
	return b
}

func put(t op.Type, b []byte, v uint64) {
	switch t.Size() {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		if t == op.Float32 {
			binary.LittleEndian.PutUint32(b, mathFloat32bits(float32(v%(1<<20))))
			return
		}
		binary.LittleEndian.PutUint32(b, uint32(v))
	case 8:
		if t == op.Float64 {
			binary.LittleEndian.PutUint64(b, mathFloat64bits(float64(v%(1<<40))))
			return
		}
		binary.LittleEndian.PutUint64(b, v)
	default:
		for i := range b[:t.Size()] {
			b[i] = byte(v >> (8 * (i % 8)))
		}
	}
}

// Check runs alg on the case with fresh inputs (seeded by seed) and
// compares every rank's receive buffer with Reference.
func Check(alg coll.Algorithm, c Case, seed int) error {
	args := c.Args()
	send, recv := make([][]byte, c.Size), make([][]byte, c.Size)
	for r := range args {
		send[r], recv[r] = Buffers(args, r, seed)
	}
	want, err := Reference(args, send, recv)
	if err != nil {
		return fmt.Errorf("%s: reference: %w", c, err)
	}
	if err := Exec(alg, args, send, recv); err != nil {
		return fmt.Errorf("%s %s: %w", c, alg.Name, err)
	}
	if err := compare(recv, want); err != nil {
		return fmt.Errorf("%s %s: %w", c, alg.Name, err)
	}
	return nil
}

// compare reports the first rank whose receive buffer is not the reference's.
func compare(recv, want [][]byte) error {
	for r := range recv {
		if !bytes.Equal(recv[r], want[r]) {
			return fmt.Errorf("rank %d's receive buffer differs from the reference (first difference at byte %d)", r, firstDiff(recv[r], want[r]))
		}
	}
	return nil
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
