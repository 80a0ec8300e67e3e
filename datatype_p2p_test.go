package meshmpi

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"unsafe"
)

// linkOpts are the protocol settings typed messages are tested under:
// the default (eager up to 64 KiB) and every message by rendezvous in odd
// fragments.
var linkOpts = []struct {
	name string
	opts []Option
}{
	{"default", nil},
	{"rendezvous", []Option{WithEagerLimit(0), WithFrameSize(1003)}},
}

// committed returns a function that commits a constructor's result, or
// fails t.
func committed(t testing.TB) func(*Datatype, error) *Datatype {
	return func(d *Datatype, err error) *Datatype {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
		return d
	}
}

// Columns of a row-major matrix travel as Vector types and land in a
// contiguous buffer, in a plain Recv, and in the receiver's own matrix
// column; nothing else of the receiver's matrix changes.
func TestTypedMatrixColumns(t *testing.T) {
	for _, lo := range linkOpts {
		for _, dim := range [][2]int{{6, 5}, {3000, 4}} { // eager-size and rendezvous-size columns
			rows, cols := dim[0], dim[1]
			col := committed(t)(Vector(rows, 1, cols, Float64))
			t.Run(fmt.Sprintf("%s/%dx%d", lo.name, rows, cols), func(t *testing.T) {
				world(t, 2, func(w *Comm) error {
					m := make([]float64, rows*cols)
					if w.Rank() == 0 {
						for i := range m {
							m[i] = float64(i) + 0.5
						}
						for j := range cols {
							for tag := range 3 {
								if err := SendTyped(w, Bytes(m[j:]), 1, col, 1, tag); err != nil {
									return err
								}
							}
						}
						return nil
					}
					for i := range m {
						m[i] = -1
					}
					want := func(i, j int) float64 { return float64(i*cols+j) + 0.5 }
					got := make([]float64, rows)
					plain := make([]float64, rows)
					for j := range cols {
						st, err := RecvTyped(w, Bytes(got), rows, Float64, 0, 0)
						if err != nil {
							return err
						}
						if st.Count != rows || st.Bytes != rows*8 {
							return fmt.Errorf("column %d: count %d bytes %d", j, st.Count, st.Bytes)
						}
						if _, err := Recv(w, plain, 0, 1); err != nil {
							return err
						}
						if st, err = RecvTyped(w, Bytes(m[j:]), 1, col, 0, 2); err != nil || st.Count != 1 {
							return fmt.Errorf("column %d into a column: count %d, %v", j, st.Count, err)
						}
						for i := range rows {
							if got[i] != want(i, j) || plain[i] != want(i, j) {
								return fmt.Errorf("column %d row %d: %v and %v, want %v", j, i, got[i], plain[i], want(i, j))
							}
						}
					}
					for i := range rows {
						for j := range cols {
							if m[i*cols+j] != want(i, j) {
								return fmt.Errorf("matrix (%d,%d) = %v, want %v", i, j, m[i*cols+j], want(i, j))
							}
						}
					}
					return nil
				}, lo.opts...)
			})
		}
	}
}

type mixed struct {
	A int32
	B float64
	C [3]int16
}

func mixedType(t testing.TB) *Datatype {
	var r mixed
	return committed(t)(Struct([]int{1, 1, 3},
		[]int{int(unsafe.Offsetof(r.A)), int(unsafe.Offsetof(r.B)), int(unsafe.Offsetof(r.C))},
		[]*Datatype{Int32, Float64, Int16}))
}

func mixedBytes(s []mixed) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(mixed{})))
}

// Records of mixed fields travel as a Struct type: the fields arrive and
// the receiver's padding bytes are not written.
func TestTypedStructRecords(t *testing.T) {
	dt := mixedType(t)
	for _, lo := range linkOpts {
		for _, n := range []int{3, 5000} {
			t.Run(fmt.Sprintf("%s/%d", lo.name, n), func(t *testing.T) {
				world(t, 2, func(w *Comm) error {
					recs := make([]mixed, n)
					if w.Rank() == 0 {
						for i := range recs {
							recs[i] = mixed{int32(i), float64(i) / 4, [3]int16{int16(i), -int16(i), 7}}
						}
						return SendTyped(w, mixedBytes(recs), n, dt, 1, 0)
					}
					raw := mixedBytes(recs)
					for i := range raw {
						raw[i] = 0xa5
					}
					st, err := RecvTyped(w, raw, n, dt, 0, 0)
					if err != nil || st.Count != n || st.Bytes != n*dt.Size() {
						return fmt.Errorf("count %d bytes %d, %v", st.Count, st.Bytes, err)
					}
					for i, r := range recs {
						if r.A != int32(i) || r.B != float64(i)/4 || r.C != [3]int16{int16(i), -int16(i), 7} {
							return fmt.Errorf("record %d: %+v", i, r)
						}
						rb := raw[i*int(unsafe.Sizeof(r)):]
						if !bytes.Equal(rb[4:8], []byte{0xa5, 0xa5, 0xa5, 0xa5}) || !bytes.Equal(rb[22:24], []byte{0xa5, 0xa5}) {
							return fmt.Errorf("record %d: padding written: % x", i, rb[:24])
						}
					}
					return nil
				}, lo.opts...)
			})
		}
	}
}

// A message longer than the typed receive fills exactly the described
// layout and gives ErrTruncate; one that ends inside an element gives an
// Undefined count and no error.
func TestTypedTruncateAndPartial(t *testing.T) {
	strided := committed(t)(Vector(7, 1, 3, Int32)) // 7 int32, every third
	tri := committed(t)(Vector(3, 1, 2, Int32))     // 3 int32, every second
	triC := committed(t)(Contiguous(3, Int32))
	for _, lo := range linkOpts {
		t.Run(lo.name, func(t *testing.T) {
			world(t, 2, func(w *Comm) error {
				data := make([]int32, 10)
				for i := range data {
					data[i] = int32(100 + i)
				}
				if w.Rank() == 0 {
					for tag := range 3 {
						if err := Send(w, data, 1, tag); err != nil {
							return err
						}
					}
					return nil
				}
				// truncation: 10 elements into a layout of 7
				buf := make([]int32, 21)
				for i := range buf {
					buf[i] = -1
				}
				st, err := RecvTyped(w, Bytes(buf), 1, strided, 0, 0)
				if err := expectErr(err, ErrTruncate, "truncated typed receive"); err != nil {
					return err
				}
				for i, v := range buf {
					want := int32(-1)
					if i%3 == 0 {
						want = int32(100 + i/3)
					}
					if v != want {
						return fmt.Errorf("truncated receive: buf[%d] = %d, want %d (status %+v)", i, v, want, st)
					}
				}
				// a partial element: 10 int32 into elements of 3
				for tag, dt := range []*Datatype{tri, triC} {
					buf := make([]int32, 4*dt.Extent()/4)
					for i := range buf {
						buf[i] = -1
					}
					st, err := RecvTyped(w, Bytes(buf), 4, dt, 0, tag+1)
					if err != nil || st.Count != Undefined || st.Bytes != 40 || GetCountTyped(st, dt) != Undefined {
						return fmt.Errorf("partial element of %s: status %+v, %v", dt, st, err)
					}
					stride := 2 // int32s between an element's values
					if dt == triC {
						stride = 1
					}
					for k := range 10 {
						e, i := k/3, k%3
						if got := buf[e*dt.Extent()/4+i*stride]; got != int32(100+k) {
							return fmt.Errorf("partial element of %s: element %d = %d", dt, k, got)
						}
					}
					if dt == tri && buf[len(buf)-1] != -1 {
						return fmt.Errorf("partial element: wrote past the message: %v", buf)
					}
				}
				return nil
			}, lo.opts...)
		})
	}
}

// Nonblocking and persistent typed requests, with the data changed between
// persistent starts.
func TestTypedNonblockingPersistent(t *testing.T) {
	col := committed(t)(Vector(50, 1, 4, Int64))
	for _, lo := range linkOpts {
		t.Run(lo.name, func(t *testing.T) {
			world(t, 2, func(w *Comm) error {
				ctx, cancel := context.WithTimeout(context.Background(), time60)
				defer cancel()
				m := make([]int64, 200)
				if w.Rank() == 0 {
					r, err := IsendTyped(w, Bytes(m[1:]), 1, col, 1, 0)
					if err != nil {
						return err
					}
					if _, err := r.Wait(ctx); err != nil {
						return err
					}
					ps, err := SendTypedInit(w, Bytes(m), 1, col, 1, 1)
					if err != nil {
						return err
					}
					for round := range 4 {
						for i := range m {
							m[i] = int64(round*1000 + i)
						}
						if err := ps.Start(); err != nil {
							return err
						}
						if st, err := ps.Wait(ctx); err != nil || st.Count != 1 {
							return fmt.Errorf("persistent send: %+v %v", st, err)
						}
					}
					return ps.Free()
				}
				got := make([]int64, 200)
				r, err := IrecvTyped(w, Bytes(got[2:]), 1, col, 0, 0)
				if err != nil {
					return err
				}
				if st, err := r.Wait(ctx); err != nil || st.Count != 1 {
					return fmt.Errorf("irecv: %+v %v", st, err)
				}
				pr, err := RecvTypedInit(w, Bytes(got[3:]), 1, col, 0, 1)
				if err != nil {
					return err
				}
				for round := range 4 {
					if err := pr.Start(); err != nil {
						return err
					}
					if st, err := pr.Wait(ctx); err != nil || st.Count != 1 || st.Bytes != 400 {
						return fmt.Errorf("persistent receive: %+v %v", st, err)
					}
					for i := range 50 {
						if g := got[3+4*i]; g != int64(round*1000+4*i) {
							return fmt.Errorf("round %d element %d: %d", round, i, g)
						}
					}
				}
				return pr.Free()
			}, lo.opts...)
		})
	}
}

// Misuse is an error on the calling rank, before anything is sent.
func TestTypedMisuse(t *testing.T) {
	uncommitted, _ := Vector(2, 1, 2, Float64)
	freed := committed(t)(Vector(2, 1, 2, Float64))
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	world(t, 2, func(w *Comm) error {
		buf := make([]byte, 64)
		cases := []struct {
			name string
			err  error
			want error
		}{
			{"uncommitted send", SendTyped(w, buf, 1, uncommitted, 1, 0), ErrType},
			{"freed send", SendTyped(w, buf, 1, freed, 1, 0), ErrType},
			{"nil type", SendTyped(w, buf, 1, nil, 1, 0), ErrType},
			{"negative count", SendTyped(w, buf, -1, Float64, 1, 0), ErrCount},
			{"past the buffer", SendTyped(w, buf, 9, Float64, 1, 0), ErrBuffer},
			{"uncommitted irecv", second(IrecvTyped(w, buf, 1, uncommitted, 1, 0)), ErrType},
			{"bad rank", SendTyped(w, buf, 1, Float64, 5, 0), ErrRank},
		}
		for _, c := range cases {
			if err := expectErr(c.err, c.want, c.name); err != nil {
				return err
			}
		}
		// ProcNull completes at once with an empty status
		st, err := RecvTyped(w, buf, 2, Float64, ProcNull, 0)
		return expect(err == nil && st.Source == ProcNull && st.Count == 0, "receive from ProcNull: %+v %v", st, err)
	})
}

const time60 = 60e9
