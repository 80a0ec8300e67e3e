package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// withTelemetry turns a Run world's recorders on, as a job's telemetry
// setting does, keeping up to ops operations between takes.
func withTelemetry(ops int) Option {
	return func(c *config) error {
		c.telemetry = telemetryConfig{on: true, ops: ops}
		return nil
	}
}

func TestTelemetrySettings(t *testing.T) {
	for _, ok := range []map[string]string{
		{SettingTelemetry: "1"},
		{SettingTelemetry: "0"},
		{SettingTelemetry: "true", SettingTelemetryInterval: "100", SettingTelemetryOps: "1024"},
		{SettingTelemetry: "1", SettingTelemetryInterval: "10000", SettingTelemetryOps: "1"},
	} {
		require.NoError(t, CheckSettings(ok), "%v", ok)
	}
	for _, bad := range []map[string]string{
		{SettingTelemetry: "yes"},
		{SettingTelemetryInterval: "99"},
		{SettingTelemetryInterval: "10001"},
		{SettingTelemetryInterval: "1s"},
		{SettingTelemetryOps: "0"},
		{SettingTelemetryOps: "1025"},
		{"telemetry.rate": "1"},
	} {
		err := CheckSettings(bad)
		require.Error(t, err, "%v", bad)
	}
	var cfg config
	_, err := applySettings(&cfg, map[string]string{SettingTelemetry: "1", SettingTelemetryInterval: "500"})
	require.NoError(t, err)
	tc := cfg.telemetry.withDefaults()
	require.True(t, tc.on)
	require.Equal(t, 500, int(tc.interval.Milliseconds()))
	require.Equal(t, DefaultTelemetryOps, tc.ops)
}

// takeOps returns what rank's recorder holds, as "op comm peer bytes err"
// lines, and its dropped count.
func takeOps(w *Comm) (ops []string, dropped int) {
	recs, dropped := w.p.rec.take()
	defer w.p.rec.done(recs)
	for _, r := range recs {
		line := fmt.Sprintf("%s %s %d %d", r.Op(), r.CommName(), r.peer, r.bytes)
		if r.err != nil {
			line += " err"
		}
		if r.start <= 0 || r.end < r.start {
			line += fmt.Sprintf(" bad-times(%d,%d)", r.start, r.end)
		}
		ops = append(ops, line)
	}
	return ops, dropped
}

// Every kind of operation is recorded once, at its completion: blocking,
// nonblocking and persistent collectives (each start), and point-to-point
// of every form, with the world rank of the peer; the library's own
// exchanges (a Split's) are not.
func TestTelemetryRecordsOperations(t *testing.T) {
	ctx := context.Background()
	world(t, 3, func(w *Comm) error {
		in, out := []float64{1}, []float64{0}
		if err := Allreduce(w, in, out, Sum); err != nil {
			return err
		}
		r, err := Iallreduce(w, in, out, Sum)
		if err != nil {
			return err
		}
		if _, err := r.Wait(ctx); err != nil {
			return err
		}
		p, err := AllreduceInit(w, in, out, Sum)
		if err != nil {
			return err
		}
		for range 2 {
			if err := p.Start(); err != nil {
				return err
			}
			if _, err := p.Wait(ctx); err != nil {
				return err
			}
		}
		if err := p.Free(); err != nil {
			return err
		}
		// a ring of sends on a communicator of its own (ranks reversed)
		sub, err := w.Split(0, -w.Rank())
		if err != nil {
			return err
		}
		buf := make([]int32, 4)
		next, prev := (sub.Rank()+1)%3, (sub.Rank()+2)%3
		rq, err := Irecv(sub, buf, AnySource, 5)
		if err != nil {
			return err
		}
		if err := Send(sub, []int32{1, 2, 3, 4}, next, 5); err != nil {
			return err
		}
		if _, err := rq.Wait(ctx); err != nil {
			return err
		}
		if _, err := Recv(w, buf[:1], ProcNull, 0); err != nil { // not recorded
			return err
		}
		if err := Barrier(w); err != nil {
			return err
		}
		ops, dropped := takeOps(w)
		worldOf := func(subRank int) int { return sub.ranks[subRank] }
		subName := "comm " + fmt.Sprint(sub.id)
		want := []string{
			"allreduce world -1 8", "allreduce world -1 8", "allreduce world -1 8", "allreduce world -1 8",
			fmt.Sprintf("send %s %d 16", subName, worldOf(next)),
			fmt.Sprintf("recv %s %d 16", subName, worldOf(prev)),
			"barrier world -1 0",
		}
		return errors.Join(expect(slices.Equal(ops, want), "rank %d recorded\n%s\nwant\n%s", w.Rank(), strings.Join(ops, "\n"), strings.Join(want, "\n")),
			expect(dropped == 0, "dropped %d", dropped), sub.Free())
	}, withTelemetry(64))
}

// A full recorder drops and counts; a take empties it.
func TestTelemetryDropsBeyondItsBound(t *testing.T) {
	world(t, 1, func(w *Comm) error {
		for range 5 {
			if err := Barrier(w); err != nil {
				return err
			}
		}
		ops, dropped := takeOps(w)
		if err := expect(len(ops) == 3 && dropped == 2, "%d ops, %d dropped; want 3, 2", len(ops), dropped); err != nil {
			return err
		}
		if err := Barrier(w); err != nil {
			return err
		}
		ops, dropped = takeOps(w)
		return expect(len(ops) == 1 && dropped == 0, "after a take: %d ops, %d dropped; want 1, 0", len(ops), dropped)
	}, withTelemetry(3))
}

// Recording and taking allocate nothing: the point-to-point and
// persistent collective paths that allocate nothing with telemetry off
// stay so with it on.
func TestTelemetryNoAllocs(t *testing.T) {
	ctx := context.Background()
	world(t, 2, func(w *Comm) error {
		drain := func() {
			recs, _ := w.p.rec.take()
			w.p.rec.done(recs)
		}
		buf, got := []byte{1, 2, 3, 4, 5, 6, 7, 8}, make([]byte, 8)
		other := 1 - w.Rank()
		pingPong := func() {
			if w.Rank() == 0 {
				_ = Send(w, buf, other, 1)
				_, _ = Recv(w, got, other, 1)
			} else {
				_, _ = Recv(w, got, other, 1)
				_ = Send(w, buf, other, 1)
			}
			drain()
		}
		in, out := []float64{1}, []float64{0}
		p, err := AllreduceInit(w, in, out, Sum)
		if err != nil {
			return err
		}
		persistent := func() {
			_ = p.Start()
			_, _ = p.Wait(ctx)
			drain()
		}
		var errs []error
		for _, c := range []struct {
			name string
			f    func()
		}{{"send+recv", pingPong}, {"persistent allreduce", persistent}} {
			c.f()
			if w.Rank() != 0 {
				for range 1001 {
					c.f()
				}
				continue
			}
			if a := testing.AllocsPerRun(1000, c.f); a != 0 {
				errs = append(errs, fmt.Errorf("%s with telemetry on: %.2f allocations per cycle", c.name, a))
			}
		}
		return errors.Join(append(errs, p.Free())...)
	}, withTelemetry(16))
}

// BenchmarkTelemetryRecord is what telemetry adds to one operation of a
// rank: the clock at its start, and the record at its end (the clock
// again, the buffer's lock and a 64-byte entry), with the reporter's
// take every DefaultTelemetryOps records.
func BenchmarkTelemetryRecord(b *testing.B) {
	b.ReportAllocs()
	rec := newRecorder(DefaultTelemetryOps)
	c := &Comm{name: "world"}
	for i := range b.N {
		start := rec.now()
		rec.record(opSend, c, 1, 8, start, nil)
		if i%DefaultTelemetryOps == DefaultTelemetryOps-1 {
			recs, _ := rec.take()
			rec.done(recs)
		}
	}
}
