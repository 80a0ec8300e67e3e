package meshmpi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

// Alltoallw's reference is sequential and naive: every rank's send block
// for rank r is packed through the naive typemap (datatype_test.go) and
// unpacked the same way into rank r's expected receive buffer.

// a2awCase lays out one rank's call: per peer a count, a byte
// displacement and a datatype on each side, each pair of signatures
// matching (so many float64 go from r to k as r's send type says and
// arrive as k's receive type says).
type a2awCase struct {
	n                    int
	sendBytes, recvBytes int
	sc, sd, rc, rd       [][]int   // [rank][peer]
	st, rt               [][]*spec // [rank][peer]
	stypes, rtypes       [][]*Datatype
}

// a2awTypes are the shapes blocks take: each holds float64s, so any two
// carry the same signature for the same number of float64s. elems is how
// many float64 one element of the type holds.
var a2awTypes = []struct {
	s     *spec
	elems int
}{
	{pre(Float64), 1},
	{&spec{kind: "vector", count: 3, bl: 1, str: 2, kids: []*spec{pre(Float64)}}, 3},
	{&spec{kind: "contiguous", count: 2, kids: []*spec{pre(Float64)}}, 2},
	{&spec{kind: "resized", lb: 0, extent: 8, kids: []*spec{{kind: "hvector", count: 2, bl: 1, str: 24, kids: []*spec{pre(Float64)}}}}, 2},
	{&spec{kind: "indexed", bls: []int{1, 2}, displs: []int{3, 0}, kids: []*spec{pre(Float64)}}, 3},
}

// newA2aw builds the case for n ranks; mode picks the layouts: 0 all
// contiguous (Float64 everywhere), 1 mixed types. inPlace makes the
// receive side symmetric, as MPI requires there.
func newA2aw(t testing.TB, n, mode int, inPlace bool) *a2awCase {
	c := &a2awCase{n: n}
	mk := func() [][]int {
		m := make([][]int, n)
		for i := range m {
			m[i] = make([]int, n)
		}
		return m
	}
	c.sc, c.sd, c.rc, c.rd = mk(), mk(), mk(), mk()
	c.st, c.rt = make([][]*spec, n), make([][]*spec, n)
	c.stypes, c.rtypes = make([][]*Datatype, n), make([][]*Datatype, n)
	// floats moves from r to k: uneven, some zero, symmetric for in place
	floats := func(r, k int) int {
		if inPlace {
			r, k = min(r, k), max(r, k)
		}
		return 6 * ((r + 2*k) % 3)
	}
	pick := func(r, k, side int) int {
		if mode == 0 {
			return 0
		}
		return (r*7 + k*3 + side) % len(a2awTypes)
	}
	commit := committed(t)
	for r := range n {
		c.st[r], c.rt[r] = make([]*spec, n), make([]*spec, n)
		c.stypes[r], c.rtypes[r] = make([]*Datatype, n), make([]*Datatype, n)
		soff, roff := 8, 16 // a gap before the first block
		for k := range n {
			// send side of r → k
			ts := a2awTypes[pick(r, k, 0)]
			for floats(r, k)%ts.elems != 0 {
				ts = a2awTypes[0]
			}
			c.st[r][k], c.stypes[r][k] = ts.s, commit(ts.s.build())
			c.sc[r][k], c.sd[r][k] = floats(r, k)/ts.elems, soff
			soff += c.sc[r][k]*c.stypes[r][k].Extent() + c.stypes[r][k].TrueExtent() + 8
			// receive side of r ← k
			// a receive layout must not overlap itself: not the resized
			// hvector, whose elements interleave and collide from the fourth
			tr := a2awTypes[pick(r, k, 1)]
			if pick(r, k, 1) == 3 {
				tr = a2awTypes[1]
			}
			for floats(k, r)%tr.elems != 0 {
				tr = a2awTypes[0]
			}
			c.rt[r][k], c.rtypes[r][k] = tr.s, commit(tr.s.build())
			c.rc[r][k], c.rd[r][k] = floats(k, r)/tr.elems, roff
			roff += c.rc[r][k]*c.rtypes[r][k].Extent() + c.rtypes[r][k].TrueExtent() + 16
		}
		c.sendBytes, c.recvBytes = max(c.sendBytes, soff), max(c.recvBytes, roff)
	}
	return c
}

// buffers returns rank r's inputs for start number seed: bytes unique to
// rank, seed and position.
func (c *a2awCase) buffers(r, seed int) (send, recv []byte) {
	send, recv = make([]byte, c.sendBytes), make([]byte, c.recvBytes)
	for i := range send {
		send[i] = byte(r*37 + seed*11 + i*3)
	}
	for i := range recv {
		recv[i] = byte(r*53 + seed*5 + i*7 + 1)
	}
	return send, recv
}

// reference computes every rank's receive buffer after the call.
func (c *a2awCase) reference(sends, recvs [][]byte, inPlace bool) [][]byte {
	out := make([][]byte, c.n)
	for r := range c.n {
		out[r] = append([]byte(nil), recvs[r]...)
	}
	for k := range c.n { // sender
		for r := range c.n { // receiver
			var stream []byte
			if inPlace {
				for _, o := range naiveOffsets(c.rt[k][r].typemap(), c.rd[k][r], c.rc[k][r]) {
					stream = append(stream, recvs[k][o])
				}
			} else {
				for _, o := range naiveOffsets(c.st[k][r].typemap(), c.sd[k][r], c.sc[k][r]) {
					stream = append(stream, sends[k][o])
				}
			}
			for i, o := range naiveOffsets(c.rt[r][k].typemap(), c.rd[r][k], c.rc[r][k]) {
				out[r][o] = stream[i]
			}
		}
	}
	return out
}

func (c *a2awCase) call(w *Comm, form collForm, send, recv []byte, inPlace bool) (*Request, error) {
	r := w.Rank()
	sc, sd, st := c.sc[r], c.sd[r], c.stypes[r]
	if inPlace {
		send, sc, sd, st = InPlace[byte](), nil, nil, nil
	}
	switch form {
	case blocking:
		return nil, Alltoallw(w, send, sc, sd, st, recv, c.rc[r], c.rd[r], c.rtypes[r])
	case nonblocking:
		return Ialltoallw(w, send, sc, sd, st, recv, c.rc[r], c.rd[r], c.rtypes[r])
	}
	return AlltoallwInit(w, send, sc, sd, st, recv, c.rc[r], c.rd[r], c.rtypes[r])
}

func TestAlltoallw(t *testing.T) {
	const starts = 3
	for _, n := range []int{1, 2, 3, 4, 5, 8} {
		for mode, layout := range []string{"contiguous", "mixed"} {
			for _, inPlace := range []bool{false, true} {
				c := newA2aw(t, n, mode, inPlace)
				for _, f := range forms {
					name := fmt.Sprintf("n=%d/%s/inplace=%v/%s", n, layout, inPlace, f.name)
					t.Run(name, func(t *testing.T) {
						// every rank's inputs for each start, and the reference results
						sends, recvs := make([][][]byte, starts), make([][][]byte, starts)
						for s := range starts {
							sends[s], recvs[s] = make([][]byte, n), make([][]byte, n)
							for r := range n {
								sends[s][r], recvs[s][r] = c.buffers(r, s)
							}
						}
						world(t, n, func(w *Comm) error {
							ctx, cancel := context.WithTimeout(context.Background(), time60)
							defer cancel()
							r := w.Rank()
							send, recv := c.buffers(r, 0)
							var req *Request
							for s := range starts {
								copy(send, sends[s][r])
								copy(recv, recvs[s][r])
								var err error
								switch {
								case f.form != persistent:
									req, err = c.call(w, f.form, send, recv, inPlace)
								case req == nil:
									if req, err = c.call(w, f.form, send, recv, inPlace); err == nil {
										err = req.Start()
									}
								default:
									err = req.Start()
								}
								if err != nil {
									return err
								}
								if req != nil {
									if _, err := req.Wait(ctx); err != nil {
										return err
									}
								}
								want := c.reference(sends[s], recvs[s], inPlace)[r]
								if !bytes.Equal(recv, want) {
									return fmt.Errorf("start %d: rank %d's receive buffer differs from the reference", s, r)
								}
								if f.form == nonblocking {
									req = nil
								}
							}
							if req != nil {
								return req.Free()
							}
							return nil
						})
					})
				}
			}
		}
	}
}

// Argument errors are reported on the calling rank; the ranks' sequence
// numbers stay in step, so a later collective still works.
func TestAlltoallwMisuse(t *testing.T) {
	uncommitted, _ := Vector(2, 1, 2, Float64)
	world(t, 2, func(w *Comm) error {
		buf := make([]byte, 64)
		two := []int{1, 1}
		d := []int{0, 8}
		f64 := []*Datatype{Float64, Float64}
		cases := []struct {
			name string
			err  error
			want error
		}{
			{"short counts", Alltoallw(w, buf, []int{1}, d, f64, buf, two, d, f64), ErrCount},
			{"uncommitted type", Alltoallw(w, buf, two, d, []*Datatype{Float64, uncommitted}, buf, two, d, f64), ErrType},
			{"nil type", Alltoallw(w, buf, two, d, f64, buf, two, d, []*Datatype{nil, Float64}), ErrType},
			{"negative count", Alltoallw(w, buf, []int{1, -1}, d, f64, buf, two, d, f64), ErrCount},
			{"block past the buffer", Alltoallw(w, buf, two, []int{0, 60}, f64, buf, two, d, f64), ErrBuffer},
			{"negative displacement", Alltoallw(w, buf, two, []int{-8, 0}, f64, buf, two, d, f64), ErrBuffer},
		}
		for _, c := range cases {
			if err := expectErr(c.err, c.want, c.name); err != nil {
				return err
			}
		}
		send, recv := make([]float64, 2), make([]float64, 2)
		send[0], send[1] = float64(w.Rank()), float64(w.Rank()+10)
		if err := Alltoall(w, send, recv); err != nil {
			return err
		}
		return expect(recv[1-w.Rank()] == float64(1-w.Rank()+10*w.Rank()), "alltoall after the errors: %v", recv)
	})
}

// A persistent Alltoallw with non-contiguous sides packs into buffers it
// holds: Start+Wait allocates nothing.
func TestAlltoallwPersistentNoAllocs(t *testing.T) {
	c := newA2aw(t, 3, 1, false)
	world(t, 3, func(w *Comm) error {
		send, recv := c.buffers(w.Rank(), 0)
		r, err := c.call(w, persistent, send, recv, false)
		if err != nil {
			return err
		}
		step, err := BarrierInit(w)
		if err != nil {
			return err
		}
		return errors.Join(noAllocs(w, 200, "alltoallw", r, step), r.Free(), step.Free())
	})
}
