package peer

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The indexed queues match exactly as a scan in arrival order does: a
// random mix of receives (specific, AnySource, AnyTag, masked) and
// messages, long enough to cross indexAt both ways, against a reference
// that scans plain slices.
func TestQueuesMatchAsAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var (
		uq    unexpQueue
		pq    postedQueue
		umsgs []*Message // reference, arrival order
		pops  []*Op
	)
	pick := func(n int) int { return rng.IntN(n) }
	var indexed, dropped [2]int // times each queue built and dropped its index
	for step := range 200000 {
		if u, p := uq.indexed, pq.exact != nil; step > 0 {
			if u && uq.n == indexAt+1 {
				indexed[0]++
			}
			if p && pq.n == indexAt+1 {
				indexed[1]++
			}
			if !u && uq.n == 0 {
				dropped[0]++
			}
			if !p && pq.n == 0 {
				dropped[1]++
			}
		}
		// phases: grow past the index threshold, then drain to empty
		grow := (step/5000)%2 == 0
		ctx, src, tag := uint32(pick(2)), pick(3), int32(pick(4))
		if pick(2) == 0 {
			// a message arrives: the oldest matching posted receive takes it
			var want *Op
			for _, op := range pops {
				if op.takes(ctx, src, tag) {
					want = op
					break
				}
			}
			got := pq.match(ctx, src, tag)
			if got != want {
				t.Fatalf("step %d: posted match for (%d,%d,%d) differs from the scan", step, ctx, src, tag)
			}
			if got != nil {
				pq.remove(got)
				for i, op := range pops {
					if op == got {
						pops = append(pops[:i], pops[i+1:]...)
						break
					}
				}
			} else if grow {
				m := &Message{ctx: ctx, src: src, tag: tag}
				uq.push(m)
				umsgs = append(umsgs, m)
			}
			continue
		}
		// a receive is posted: the oldest matching unexpected message, or it waits
		rsrc, rtag, mask := src, tag, int32(-1)
		switch pick(5) {
		case 0:
			rsrc = AnySource
		case 1:
			rtag = AnyTag
		case 2:
			mask = -2 // ignores the low bit
		}
		var want *Message
		for _, m := range umsgs {
			if m.ctx == ctx && (rsrc == AnySource || m.src == rsrc) && (rtag == AnyTag || (m.tag^rtag)&mask == 0) {
				want = m
				break
			}
		}
		got := uq.match(ctx, rsrc, rtag, mask)
		if got != want {
			t.Fatalf("step %d: unexpected match for (%d,%d,%d,%#x) differs from the scan", step, ctx, rsrc, rtag, mask)
		}
		if got != nil {
			uq.remove(got)
			for i, m := range umsgs {
				if m == got {
					umsgs = append(umsgs[:i], umsgs[i+1:]...)
					break
				}
			}
		} else if grow {
			op := &Op{ctx: ctx, peer: rsrc, tag: rtag, mask: mask}
			pq.push(op)
			pops = append(pops, op)
		}
	}
	t.Logf("indexed %v times, emptied %v steps", indexed, dropped)
	if indexed[0] == 0 || indexed[1] == 0 || dropped[0] == 0 || dropped[1] == 0 {
		t.Fatal("the test did not take both queues past indexAt and back")
	}
	if uq.n != len(umsgs) || pq.n != len(pops) {
		t.Fatalf("queue lengths %d, %d; reference %d, %d", uq.n, pq.n, len(umsgs), len(pops))
	}
}

// BenchmarkMatchUnexpected receives a message with one tag while depth
// messages with another tag from the same source wait unexpected: the cost
// of a specific receive per queue depth (issue 14: 15.6 ms at 1M before).
func BenchmarkMatchUnexpected(b *testing.B) {
	for _, depth := range []int{0, 16, 256, 1 << 16} {
		b.Run(fmt.Sprint("depth", depth), func(b *testing.B) {
			b.ReportAllocs()
			e, err := NewEndpoint(Config{Rank: 0, Size: 1, UnexpectedLimit: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			if err := e.Attach(0, NewLoopbackLink(0)); err != nil {
				b.Fatal(err)
			}
			for i := range depth { // messages nobody receives
				_ = e.StartSend(e.GetOp(), Standard, 0, 0, int32(1000+i%7), nil)
			}
			msg := make([]byte, 8)
			s, r := e.GetOp(), e.GetOp()
			b.ResetTimer()
			for range b.N {
				_ = e.StartSend(s, Standard, 0, 0, 1, msg)
				wait(s)
				_ = e.StartRecv(r, 0, 0, 1, msg)
				wait(r)
			}
		})
	}
}

// An unexpected queue that indexes and drains over and over, as at a
// rank whose peer keeps running ahead of it, keeps its index's maps and
// buckets between floods: filing allocates nothing after the first.
func TestUnexpectedIndexReused(t *testing.T) {
	var q unexpQueue
	msgs := make([]Message, 2*indexAt)
	flood := func() {
		for i := range msgs {
			msgs[i] = Message{ctx: 1, src: 2, tag: int32(i)}
			q.push(&msgs[i])
		}
		for i := range msgs {
			q.remove(q.match(1, 2, int32(i), -1))
		}
	}
	flood()
	if a := testing.AllocsPerRun(20, flood); a != 0 {
		t.Fatalf("%.1f allocations per flood of %d messages", a, len(msgs))
	}
	if q.indexed || q.n != 0 {
		t.Fatalf("after the floods: indexed %v, %d queued", q.indexed, q.n)
	}
}
