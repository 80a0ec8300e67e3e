package object

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/stretchr/testify/require"
)

// config is a value with every kind of field a program sends: strings, a
// map, a slice, nested structs, pointers.
type config struct {
	Name    string
	Steps   int
	Tol     float64
	Grid    []int
	Labels  map[string]string
	Inner   *inner
	Weights []float64
}

type inner struct {
	Seed  int64
	Flags []bool
}

func configOf(rank, size int) config {
	c := config{
		Name:   strings.Repeat("r", rank+1) + fmt.Sprint(rank),
		Steps:  100 * rank,
		Tol:    1e-6 * float64(rank+1),
		Grid:   []int{rank, rank + 1},
		Labels: map[string]string{"rank": fmt.Sprint(rank)},
		Inner:  &inner{Seed: int64(rank) << 33, Flags: []bool{rank%2 == 0}},
	}
	c.Weights = make([]float64, size)
	for i := range c.Weights {
		c.Weights[i] = float64(rank*1000 + i)
	}
	return c
}

func equalConfig(a, b config) bool {
	return a.Name == b.Name && a.Steps == b.Steps && a.Tol == b.Tol && slices.Equal(a.Grid, b.Grid) &&
		maps.Equal(a.Labels, b.Labels) && (a.Inner == nil) == (b.Inner == nil) &&
		(a.Inner == nil || a.Inner.Seed == b.Inner.Seed && slices.Equal(a.Inner.Flags, b.Inner.Flags)) &&
		slices.Equal(a.Weights, b.Weights)
}

// point is a fixed layout: it travels as its memory.
type point struct {
	X, Y float64
	ID   int32
	On   uint8
}

// sizes are value sizes (Weights lengths) that cover Bcast's inline
// message, its second message, and rendezvous-sized messages.
var sizes = []int{0, 3, 600, 20_000}

func run(t *testing.T, n int, fn func(w *meshmpi.Comm) error) {
	t.Helper()
	require.NoError(t, meshmpi.Run(n, fn))
}

func TestSendRecv(t *testing.T) {
	run(t, 3, func(w *meshmpi.Comm) error {
		next, prev := (w.Rank()+1)%3, (w.Rank()+2)%3
		for _, size := range sizes {
			// Isend: blocking sends around a ring deadlock once messages
			// are rendezvous-sized
			req, err := Isend(w, configOf(w.Rank(), size), next, size)
			if err != nil {
				return err
			}
			got, st, err := Recv[config](w, meshmpi.AnySource, size)
			if err != nil {
				return err
			}
			if _, err := req.Wait(context.Background()); err != nil {
				return err
			}
			if !equalConfig(got, configOf(prev, size)) || st.Source != prev || st.Tag != size || st.Count != 1 {
				return fmt.Errorf("size %d: got %+v status %+v", size, got, st)
			}
		}
		// a fixed layout, and the same one received as another layout
		p := point{X: 1.5, Y: float64(w.Rank()), ID: int32(w.Rank()), On: 1}
		if err := Send(w, p, next, 1); err != nil {
			return err
		}
		q, _, err := Recv[point](w, prev, 1)
		if err != nil || q != (point{X: 1.5, Y: float64(prev), ID: int32(prev), On: 1}) {
			return fmt.Errorf("point: %+v %v", q, err)
		}
		if err := Send(w, p, next, 2); err != nil {
			return err
		}
		if _, _, err := Recv[[3]int64](w, prev, 2); !errors.Is(err, ErrDecode) {
			return fmt.Errorf("point received as [3]int64: %v, want ErrDecode", err)
		}
		// a byte message that is not an object
		if err := meshmpi.Send(w, []byte("hello"), next, 3); err != nil {
			return err
		}
		if _, _, err := Recv[string](w, prev, 3); !errors.Is(err, ErrDecode) {
			return fmt.Errorf("raw bytes received as an object: %v, want ErrDecode", err)
		}
		// ProcNull
		v, st, err := Recv[config](w, meshmpi.ProcNull, 0)
		if err != nil || st.Source != meshmpi.ProcNull || v.Name != "" {
			return fmt.Errorf("recv from ProcNull: %+v %+v %v", v, st, err)
		}
		return Send(w, v, meshmpi.ProcNull, 0)
	})
}

func TestIsendSendrecv(t *testing.T) {
	run(t, 2, func(w *meshmpi.Comm) error {
		other := 1 - w.Rank()
		m := map[string][]int{"from": {w.Rank()}}
		req, err := Isend(w, m, other, 5)
		if err != nil {
			return err
		}
		m["from"] = nil // Isend encoded it already
		got, _, err := Recv[map[string][]int](w, other, 5)
		if err != nil {
			return err
		}
		if _, err := req.Wait(context.Background()); err != nil {
			return err
		}
		if !slices.Equal(got["from"], []int{other}) {
			return fmt.Errorf("isend: got %v", got)
		}
		s, _, err := Sendrecv[string, string](w, fmt.Sprint("hi from ", w.Rank()), other, 6, other, 6)
		if err != nil || s != fmt.Sprint("hi from ", other) {
			return fmt.Errorf("sendrecv: %q %v", s, err)
		}
		if w.Rank() == 0 {
			return Ssend(w, point{ID: 7}, other, 8)
		}
		p, _, err := Recv[point](w, other, 8)
		if err != nil || p.ID != 7 {
			return fmt.Errorf("ssend: %+v %v", p, err)
		}
		return nil
	})
}

func TestCollectives(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		for _, size := range sizes {
			t.Run(fmt.Sprintf("n=%d/size=%d", n, size), func(t *testing.T) {
				run(t, n, func(w *meshmpi.Comm) error { return collectives(w, size) })
			})
		}
	}
}

// collectives runs each object collective against the sequential
// answer: value r is configOf(r, size+r), so sizes differ by rank.
func collectives(w *meshmpi.Comm, size int) error {
	me, n := w.Rank(), w.Size()
	val := func(r int) config { return configOf(r, size+r) }
	for root := range n {
		var v config
		if me == root {
			v = val(root)
		}
		got, err := Bcast(w, v, root)
		if err != nil || !equalConfig(got, val(root)) {
			return fmt.Errorf("bcast root %d: %v", root, err)
		}
		all, err := Gather(w, val(me), root)
		if err != nil {
			return fmt.Errorf("gather root %d: %w", root, err)
		}
		if me == root {
			if len(all) != n {
				return fmt.Errorf("gather root %d: %d values", root, len(all))
			}
			for r := range n {
				if !equalConfig(all[r], val(r)) {
					return fmt.Errorf("gather root %d: value %d differs", root, r)
				}
			}
		} else if all != nil {
			return fmt.Errorf("gather: non-root got %d values", len(all))
		}
		var vs []config
		if me == root {
			for r := range n {
				vs = append(vs, val(10*root+r))
			}
		}
		one, err := Scatter(w, vs, root)
		if err != nil || !equalConfig(one, val(10*root+me)) {
			return fmt.Errorf("scatter root %d: %v", root, err)
		}
		cat := func(a, b string) string { return a + "," + b } // not commutative
		want := ""
		for r := range n {
			if r > 0 {
				want += ","
			}
			want += fmt.Sprint(r)
		}
		s, err := Reduce(w, fmt.Sprint(me), cat, root)
		if err != nil || (me == root && s != want) || (me != root && s != "") {
			return fmt.Errorf("reduce root %d: %q %v, want %q", root, s, err, want)
		}
	}
	all, err := Allgather(w, val(me))
	if err != nil || len(all) != n {
		return fmt.Errorf("allgather: %d values, %v", len(all), err)
	}
	for r := range n {
		if !equalConfig(all[r], val(r)) {
			return fmt.Errorf("allgather: value %d differs", r)
		}
	}
	out := make([]config, n)
	for r := range n {
		out[r] = val(100*me + r)
	}
	in, err := Alltoall(w, out)
	if err != nil || len(in) != n {
		return fmt.Errorf("alltoall: %v", err)
	}
	for r := range n {
		if !equalConfig(in[r], val(100*r+me)) {
			return fmt.Errorf("alltoall: value from %d differs", r)
		}
	}
	best, err := Allreduce(w, point{X: float64(me), ID: int32(me)}, func(a, b point) point {
		if b.X > a.X {
			return b
		}
		return a
	})
	if err != nil || best.ID != int32(n-1) {
		return fmt.Errorf("allreduce: %+v %v", best, err)
	}
	return nil
}

// unencodable cannot be encoded (CBOR has no channels).
type unencodable struct {
	C chan int
}

// A rank that cannot give its value makes the collective fail on every
// rank that needs it, and no rank waits forever.
func TestCollectiveFailuresEndEverywhere(t *testing.T) {
	const n, bad = 4, 2
	cases := []struct {
		name string
		// all: every rank must see an error; else only bad and the root (0)
		all bool
		run func(w *meshmpi.Comm) error
	}{
		{"bcast root cannot encode", true, func(w *meshmpi.Comm) error {
			_, err := Bcast(w, unencodable{}, bad)
			return err
		}},
		{"gather", false, func(w *meshmpi.Comm) error {
			if w.Rank() != bad {
				_, err := Gather(w, map[string]int{"ok": 1}, 0)
				return err
			}
			_, err := Gather(w, unencodable{}, 0)
			return err
		}},
		{"allgather", true, func(w *meshmpi.Comm) error {
			var v any = 1
			if w.Rank() == bad {
				v = unencodable{}
			}
			_, err := Allgather(w, v)
			return err
		}},
		{"scatter with too few values", true, func(w *meshmpi.Comm) error {
			_, err := Scatter(w, []int{1, 2}, bad)
			return err
		}},
		{"alltoall", true, func(w *meshmpi.Comm) error {
			vs := make([]any, n)
			if w.Rank() == bad {
				vs[3] = unencodable{}
			}
			_, err := Alltoall(w, vs)
			return err
		}},
		{"allreduce", true, func(w *meshmpi.Comm) error {
			var v any = 1
			if w.Rank() == bad {
				v = unencodable{}
			}
			_, err := Allreduce(w, v, func(a, b any) any { return a })
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := make([]error, n)
			done := make(chan error, 1)
			go func() {
				done <- meshmpi.Run(n, func(w *meshmpi.Comm) error {
					errs[w.Rank()] = tc.run(w)
					return nil
				})
			}()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(2 * time.Minute): // hang guard only: a pass takes milliseconds
				t.Fatal("a rank hangs")
			}
			for r, err := range errs {
				if tc.all || r == bad || r == 0 {
					require.Error(t, err, "rank %d", r)
				}
			}
		})
	}
}

func TestArgumentErrors(t *testing.T) {
	run(t, 2, func(w *meshmpi.Comm) error {
		var errs []error
		_, err := Reduce(w, 1, nil, 0)
		errs = append(errs, expectIs(err, meshmpi.ErrOp, "reduce with nil function"))
		_, err = Allreduce(w, 1, nil)
		errs = append(errs, expectIs(err, meshmpi.ErrOp, "allreduce with nil function"))
		_, err = Bcast(w, 1, 5)
		errs = append(errs, expectIs(err, meshmpi.ErrRoot, "bcast from root 5"))
		errs = append(errs, expectIs(Send(w, 1, 9, 0), meshmpi.ErrRank, "send to rank 9"))
		_, _, err = Recv[int](w, 0, -5)
		errs = append(errs, expectIs(err, meshmpi.ErrTag, "recv with tag -5"))
		errs = append(errs, expectIs(Send(w, unencodable{}, 1-w.Rank(), 0), nil, "send of a channel"))
		return errors.Join(errs...)
	})
}

func expectIs(err, want error, what string) error {
	if want == nil {
		if err == nil {
			return fmt.Errorf("%s: no error", what)
		}
		return nil
	}
	if !errors.Is(err, want) {
		return fmt.Errorf("%s: got %v, want %v", what, err, want)
	}
	return nil
}

func TestIntercommNotSupported(t *testing.T) {
	run(t, 2, func(w *meshmpi.Comm) error {
		self, err := w.Split(w.Rank(), 0)
		if err != nil {
			return err
		}
		inter, err := meshmpi.IntercommCreate(self, 0, w, 1-w.Rank(), 3)
		if err != nil {
			return err
		}
		_, err = Bcast(inter, 1, 0)
		return expectIs(err, meshmpi.ErrNotSupported, "bcast on an intercommunicator")
	})
}

// Malformed messages give ErrDecode, never a panic.
func FuzzDecodeMessage(f *testing.F) {
	for _, v := range []any{config{Name: "x"}, point{X: 1}} {
		var m []byte
		switch v := v.(type) {
		case config:
			m, _ = encode(v)
		case point:
			m, _ = encode(v)
		}
		f.Add(m)
	}
	f.Add([]byte{})
	f.Add(make([]byte, headerLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := decodeMessage[config](b); err != nil && !errors.Is(err, ErrDecode) {
			t.Fatalf("config: error %v is not ErrDecode", err)
		}
		if _, err := decodeMessage[point](b); err != nil && !errors.Is(err, ErrDecode) {
			t.Fatalf("point: error %v is not ErrDecode", err)
		}
	})
}

// Bcast's first message carries nothing of an earlier value past the end
// of this one (its buffer is pooled): a receiver reading it raw sees zeros.
func TestBcastSendsNoStaleBytes(t *testing.T) {
	run(t, 2, func(w *meshmpi.Comm) error {
		for _, s := range []string{strings.Repeat("x", 1500), "short"} {
			if w.Rank() == 0 {
				if _, err := Bcast(w, s, 0); err != nil {
					return err
				}
				continue
			}
			first := make([]byte, bcastInline)
			if err := meshmpi.Bcast(w, first, 0); err != nil {
				return err
			}
			h, err := readHeader(first)
			if err != nil {
				return err
			}
			for i, b := range first[headerLen+h.n:] {
				if b != 0 {
					return fmt.Errorf("value of %d bytes: byte %d past its end is %#x", len(s), headerLen+h.n+i, b)
				}
			}
		}
		return nil
	})
}

// Which types travel as memory: numbers, arrays and structs of them with
// exported fields; not bools (a peer could send a byte that is no bool),
// pointers, slices, strings, maps or unexported fields.
func TestFixedLayouts(t *testing.T) {
	require.True(t, layoutOf[point]().fixed)
	require.True(t, layoutOf[[4]complex128]().fixed)
	require.False(t, layoutOf[bool]().fixed)
	require.False(t, layoutOf[struct {
		X, Y float64
		Ok   bool
	}]().fixed)
	require.False(t, layoutOf[struct{ x float64 }]().fixed)
	require.False(t, layoutOf[[2]*int]().fixed)
	require.False(t, layoutOf[config]().fixed)
	// same layout, another name: one hash; another layout: another
	type twin struct {
		A, B float64
		C    int32
		D    uint8
	}
	require.Equal(t, layoutOf[point]().hash, layoutOf[twin]().hash)
	require.NotEqual(t, layoutOf[point]().hash, layoutOf[[3]float64]().hash)
}
