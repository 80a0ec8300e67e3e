package colltest_test

import (
	"strings"
	"testing"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/coll/colltest"
	"github.com/meshmpi/meshmpi/op"
)

func send(n, off int) coll.Ref    { return coll.Ref{Buf: coll.BufSend, Off: off, Len: n} }
func recv(n, off int) coll.Ref    { return coll.Ref{Buf: coll.BufRecv, Off: off, Len: n} }
func scratch(n, off int) coll.Ref { return coll.Ref{Buf: coll.BufScratch, Off: off, Len: n} }

// TestHazards builds small plans by hand: each must pass, or fail with an
// error containing want.
func TestHazards(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *coll.Builder)
		want  string
	}{
		{"receive into what an unordered send reads", func(b *coll.Builder) {
			b.Send(1, recv(8, 0))
			b.Recv(1, recv(8, 4))
		}, "unordered"},
		{"the same receive ordered after the send", func(b *coll.Builder) {
			s := b.Send(1, recv(8, 0))
			b.Recv(1, recv(8, 4), s)
		}, ""},
		{"ordered through a fence", func(b *coll.Builder) {
			b.Send(1, recv(8, 0))
			b.Fence()
			b.Recv(1, recv(8, 0))
		}, ""},
		{"ordered transitively", func(b *coll.Builder) {
			s := b.Send(1, recv(8, 0))
			j := b.Join(s)
			b.Recv(1, recv(8, 0), j)
		}, ""},
		{"two unordered reads", func(b *coll.Builder) {
			b.Send(1, recv(8, 0))
			b.Send(2, recv(8, 0))
		}, ""},
		{"two unordered writes", func(b *coll.Builder) {
			b.Recv(1, scratch(8, 0))
			b.Copy(send(8, 0), scratch(8, 0))
		}, "unordered"},
		{"adjacent, not overlapping", func(b *coll.Builder) {
			b.Recv(1, recv(8, 0))
			b.Recv(2, recv(8, 8))
		}, ""},
		{"an access starting inside a long one, after a shorter one", func(b *coll.Builder) {
			b.Send(1, recv(64, 0))
			b.Send(2, recv(8, 0))
			b.Recv(3, recv(8, 40))
		}, "unordered"},
		{"the same offsets in different buffers", func(b *coll.Builder) {
			b.Recv(1, recv(8, 0))
			b.Recv(2, scratch(8, 0))
		}, ""},
		{"empty ranges touch nothing", func(b *coll.Builder) {
			b.Recv(1, recv(0, 0))
			b.Recv(2, recv(0, 0))
		}, ""},
		{"a receive into the send buffer", func(b *coll.Builder) {
			b.Recv(1, send(8, 0))
		}, "writes the send buffer"},
		{"a copy into the send buffer", func(b *coll.Builder) {
			b.Copy(recv(8, 0), send(8, 0))
		}, "writes the send buffer"},
		{"a copy onto itself, shifted", func(b *coll.Builder) {
			b.Copy(recv(8, 0), recv(8, 4))
		}, "overlapping"},
		{"a reduction onto overlapping bytes", func(b *coll.Builder) {
			b.Reduce(scratch(16, 0), scratch(16, 8))
		}, "overlapping"},
		{"a reduction of scratch into recv", func(b *coll.Builder) {
			r := b.Recv(1, scratch(8, 0))
			b.Reduce(scratch(8, 0), recv(8, 0), r)
		}, ""},
		{"a reduction unordered with the receive of its operand", func(b *coll.Builder) {
			b.Recv(1, scratch(8, 0))
			b.Reduce(scratch(8, 0), recv(8, 0))
		}, "unordered"},
	} {
		b := coll.NewBuilder(op.Sum, op.Int64)
		tc.build(b)
		p, err := b.Plan("t")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err = colltest.Hazards(p)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSegments checks the message-size rule on hand-built plans.
func TestSegments(t *testing.T) {
	args := func(c coll.Coll, elem, seg int) *coll.Args {
		return &coll.Args{Coll: c, Size: 2, ElemSize: elem, Segment: seg}
	}
	for _, tc := range []struct {
		name string
		a    *coll.Args
		lens []int
		ok   bool
	}{
		{"no bound", args(coll.Allgather, 8, 0), []int{8, 800}, true},
		{"within the bound", args(coll.Allgather, 8, 16), []int{8, 16}, true},
		{"over the bound", args(coll.Allgather, 8, 16), []int{24}, false},
		{"bound rounded down to whole elements", args(coll.Allgather, 8, 23), []int{24}, false},
		{"bound below an element: one element", args(coll.Allgather, 8, 5), []int{8}, true},
		{"bound below an element: not two", args(coll.Allgather, 8, 5), []int{16}, false},
		{"part of an element", args(coll.Allgather, 8, 0), []int{12}, false},
		{"an empty message", args(coll.Allgather, 8, 0), []int{0}, false},
		{"a barrier's empty messages", args(coll.Barrier, 8, 0), []int{0, 0}, true},
		{"a barrier's message with data", args(coll.Barrier, 8, 0), []int{8}, false},
		{"a barrier without an element size", args(coll.Barrier, 0, 4), []int{0}, true},
		{"no element size", args(coll.Allgather, 0, 0), []int{8}, false},
	} {
		for _, kind := range []coll.StepKind{coll.StepSend, coll.StepRecv} {
			b := coll.NewBuilder(nil, op.Int64)
			prev := b.Join()
			for _, n := range tc.lens {
				if kind == coll.StepSend {
					prev = b.Send(1, recv(n, 0), prev)
				} else {
					prev = b.Recv(1, recv(n, 0), prev)
				}
			}
			p, err := b.Plan("t")
			if err != nil {
				t.Fatal(err)
			}
			if err := colltest.Segments(p, tc.a); (err == nil) != tc.ok {
				t.Errorf("%s (%s): got %v, want ok=%v", tc.name, kind, err, tc.ok)
			}
		}
	}
}

// TestCheckPersistent runs a plan that is right on its first start only: it
// sums the input into scratch, which only starts out zero, and copies the
// sum out. CheckPersistent must pass it for one start and fail it for two.
func TestCheckPersistent(t *testing.T) {
	stale := coll.Algorithm{Coll: coll.Allreduce, Name: "stale_scratch", Build: func(b *coll.Builder, a *coll.Args) error {
		n := a.Bytes(a.Count)
		acc := b.Scratch(n)
		sum := b.Reduce(send(n, 0), acc)
		b.Copy(acc, recv(n, 0), sum)
		return nil
	}}
	c := colltest.Case{Coll: coll.Allreduce, Size: 1, Count: 3}
	if err := colltest.CheckPersistent(stale, c, 1); err != nil {
		t.Errorf("one start: %v", err)
	}
	if err := colltest.CheckPersistent(stale, c, 2); err == nil {
		t.Error("two starts: CheckPersistent passed a plan that keeps a sum in scratch across starts")
	} else {
		t.Log(err)
	}
}
