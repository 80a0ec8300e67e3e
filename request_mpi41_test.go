package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// Persistent point-to-point requests on ProcNull complete at once with the
// ProcNull status, alone and through Startall (MPI-4.1 §3.9, §3.11): the
// halo exchange of a non-periodic Cartesian grid. Ranks with a core each
// poll while they start a request, which once dereferenced the absent
// endpoint of a ProcNull request.
func TestPersistentProcNull(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		buf := []float64{1, 2}
		typed := Bytes(buf)
		inits := []struct {
			name string
			make func() (*Request, error)
		}{
			{"RecvInit", func() (*Request, error) { return RecvInit(w, buf, ProcNull, 0) }},
			{"SendInit", func() (*Request, error) { return SendInit(w, buf, ProcNull, 0) }},
			{"SsendInit", func() (*Request, error) { return SsendInit(w, buf, ProcNull, 0) }},
			{"RecvAccumulateInit", func() (*Request, error) { return RecvAccumulateInit(w, buf, Sum, ProcNull, 0) }},
			{"SendTypedInit", func() (*Request, error) { return SendTypedInit(w, typed, 2, Float64, ProcNull, 0) }},
			{"RecvTypedInit", func() (*Request, error) { return RecvTypedInit(w, typed, 2, Float64, ProcNull, 0) }},
		}
		var reqs []*Request
		for _, in := range inits {
			r, err := in.make()
			if err != nil {
				return fmt.Errorf("%s: %w", in.name, err)
			}
			reqs = append(reqs, r)
			for round := range 2 {
				if err := r.Start(); err != nil {
					return fmt.Errorf("%s: start %d: %w", in.name, round, err)
				}
				st, err := r.Wait(context.Background())
				if err != nil || st.Source != ProcNull || st.Tag != AnyTag || st.Count != 0 {
					return fmt.Errorf("%s: start %d: status %+v, %v; want the ProcNull status", in.name, round, st, err)
				}
			}
		}
		for round := range 2 {
			if err := Startall(reqs); err != nil {
				return fmt.Errorf("startall %d: %w", round, err)
			}
			if err := Waitall(context.Background(), reqs, nil); err != nil {
				return fmt.Errorf("waitall %d: %w", round, err)
			}
		}
		for _, r := range reqs {
			if err := r.Free(); err != nil {
				return err
			}
		}
		return expect(slices.Equal(buf, []float64{1, 2}), "ProcNull operations changed the buffer: %v", buf)
	})
}

// A persistent request that is not active (never started, or completed and
// waited on already) gives the empty status on Wait and Test (MPI-4.1
// §3.7.3), not the status of its last run.
func TestInactivePersistentEmptyStatus(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		other := 1 - w.Rank()
		buf := []int32{int32(w.Rank()), 7}
		var (
			r   *Request
			err error
		)
		if w.Rank() == 0 {
			r, err = SendInit(w, buf, other, 4)
		} else {
			r, err = RecvInit(w, buf, other, 4)
		}
		if err != nil {
			return err
		}
		defer r.Free()
		var errs []error
		checkEmpty := func(what string, st Status, err error) {
			errs = append(errs, expect(err == nil && st == emptyStatus, "%s: status %+v, %v; want the empty status", what, st, err))
		}
		st, err := r.Wait(context.Background())
		checkEmpty("wait before start", st, err)
		if err := r.Start(); err != nil {
			return err
		}
		st, err = r.Wait(context.Background())
		if err != nil {
			return err
		}
		if w.Rank() == 1 {
			errs = append(errs, expect(st.Source == 0 && st.Tag == 4 && st.Count == 2, "first wait: %+v", st))
		}
		st, err = r.Wait(context.Background())
		checkEmpty("second wait", st, err)
		st, ok, err := r.Test()
		errs = append(errs, expect(ok, "test of an inactive request reported not done"))
		checkEmpty("test after completion", st, err)
		return errors.Join(errs...)
	})
}

// Freeing an active persistent send lets it complete (MPI-4.1 §3.7.3):
// the receiver gets the data; a rendezvous-sized message is still moving
// when the send is freed.
func TestFreeActivePersistentSend(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		const n = 50_000
		if w.Rank() == 0 {
			data := fill(0, 3, n)
			for _, init := range []func() (*Request, error){
				func() (*Request, error) { return SendInit(w, data, 1, 0) },
				func() (*Request, error) { return SsendInit(w, data, 1, 1) },
				func() (*Request, error) { return SendTypedInit(w, Bytes(data), n, Int64, 1, 2) },
			} {
				r, err := init()
				if err != nil {
					return err
				}
				if err := r.Start(); err != nil {
					return err
				}
				if err := r.Free(); err != nil {
					return fmt.Errorf("free an active persistent send: %w", err)
				}
				if r.State() != Freed {
					return fmt.Errorf("freed request is %s", r.State())
				}
			}
			_, err := Recv(w, []byte{0}, 1, 9) // the receiver saw everything
			return err
		}
		for tag := range 3 {
			got := make([]int64, n)
			if _, err := Recv(w, got, 0, tag); err != nil {
				return err
			}
			if !slices.Equal(got, fill(0, 3, n)) {
				return fmt.Errorf("tag %d: data of the freed send differs", tag)
			}
		}
		return Send(w, []byte{1}, 0, 9)
	})
}
