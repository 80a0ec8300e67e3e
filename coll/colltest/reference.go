package colltest

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
)

// Reference computes, sequentially and naively, what every rank's receive
// buffer must hold after the collective described by args (args[r] is rank
// r's call). send and recv are the buffers as they were before the call;
// the result is returned in fresh buffers, so the implementation and the
// reference never share memory. Reductions fold in rank order,
// ((x0 ⊕ x1) ⊕ x2) ⊕ …, which is what a non-commutative op must give.
func Reference(args []coll.Args, send, recv [][]byte) ([][]byte, error) {
	n := len(args)
	a := args[0]
	e := a.ElemSize
	out := make([][]byte, n)
	for r := range out {
		out[r] = append([]byte(nil), recv[r]...)
	}
	// src returns rank r's input: its send buffer, or its receive buffer
	// (at its own block, for the gathers) when in place
	src := func(r, off, length int) []byte {
		if args[r].InPlace {
			return recv[r][off : off+length]
		}
		return send[r][:length]
	}
	fold := func(part func(r int) []byte, upto int) ([]byte, error) {
		acc := append([]byte(nil), part(0)...)
		for r := 1; r < upto; r++ {
			x := append([]byte(nil), part(r)...)
			if err := a.Op.Reduce(a.Type, acc, x); err != nil { // x = acc ⊕ x
				return nil, err
			}
			acc = x
		}
		return acc, nil
	}
	cb := a.Bytes(a.Count)
	switch a.Coll {
	case coll.Barrier:
	case coll.Bcast:
		for r := range out {
			copy(out[r][:cb], recv[a.Root][:cb])
		}
	case coll.Gather:
		for r := range n {
			copy(out[a.Root][r*cb:], src(r, r*cb, cb))
		}
	case coll.Gatherv:
		for r := range n {
			off := a.Displs[r] * e
			copy(out[a.Root][off:], src(r, off, a.Counts[r]*e))
		}
	case coll.Scatter:
		for r := range n {
			if r != a.Root || !args[r].InPlace {
				copy(out[r][:cb], send[a.Root][r*cb:(r+1)*cb])
			}
		}
	case coll.Scatterv:
		for r := range n {
			if r != a.Root || !args[r].InPlace {
				off := a.Displs[r] * e
				copy(out[r], send[a.Root][off:off+a.Counts[r]*e])
			}
		}
	case coll.Allgather:
		for r := range n {
			for k := range n {
				copy(out[r][k*cb:], src(k, k*cb, cb))
			}
		}
	case coll.Allgatherv:
		for r := range n {
			for k := range n {
				off := a.Displs[k] * e
				copy(out[r][off:], src(k, off, a.Counts[k]*e))
			}
		}
	case coll.Alltoall:
		for r := range n {
			for k := range n {
				from := send[k]
				if a.InPlace {
					from = recv[k]
				}
				copy(out[r][k*cb:(k+1)*cb], from[r*cb:(r+1)*cb])
			}
		}
	case coll.Alltoallv:
		for r := range n {
			for k := range n {
				from, fa := send[k], args[k]
				soff, slen := fa.SendDispls[r]*e, fa.SendCounts[r]*e
				if fa.InPlace {
					from, soff, slen = recv[k], fa.Displs[r]*e, fa.Counts[r]*e
				}
				if slen != args[r].Counts[k]*e {
					return nil, fmt.Errorf("alltoallv: rank %d sends %d bytes to %d, which expects %d", k, slen, r, args[r].Counts[k]*e)
				}
				copy(out[r][args[r].Displs[k]*e:], from[soff:soff+slen])
			}
		}
	case coll.Reduce, coll.Allreduce:
		acc, err := fold(func(r int) []byte { return src(r, 0, cb) }, n)
		if err != nil {
			return nil, err
		}
		for r := range n {
			if a.Coll == coll.Allreduce || r == a.Root {
				copy(out[r][:cb], acc)
			}
		}
	case coll.ReduceScatterBlock, coll.ReduceScatter:
		off := 0
		for r := range n {
			length := cb
			if a.Coll == coll.ReduceScatter {
				length = a.Counts[r] * e
			}
			acc, err := fold(func(k int) []byte {
				if args[k].InPlace {
					return recv[k][off : off+length]
				}
				return send[k][off : off+length]
			}, n)
			if err != nil {
				return nil, err
			}
			copy(out[r][:length], acc)
			off += length
		}
	case coll.Scan, coll.Exscan:
		for r := range n {
			upto := r + 1
			if a.Coll == coll.Exscan {
				if r == 0 {
					continue
				}
				upto = r
			}
			acc, err := fold(func(k int) []byte { return src(k, 0, cb) }, upto)
			if err != nil {
				return nil, err
			}
			copy(out[r][:cb], acc)
		}
	default:
		return nil, fmt.Errorf("no reference for %s", a.Coll)
	}
	return out, nil
}
