package meshmpi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// A send no receive has matched is cancelled (MPI-4.1 §3.8.4): its
// request completes with Status.Cancelled, even an eager one that had
// completed locally, and the receiver never sees the message but gets the
// next one. A send the receiver has matched completes normally. As
// MPICH's scancel does it: the receiver probes the message, tells the
// sender, and the sender cancels.
func TestCancelSendUnmatched(t *testing.T) {
	type starter func(w *Comm, buf []int64, tag int) (*Request, error)
	persistent := func(w *Comm, buf []int64, tag int) (*Request, error) {
		r, err := SendInit(w, buf, 1, tag)
		if err != nil {
			return nil, err
		}
		return r, r.Start()
	}
	for _, tc := range []struct {
		name  string
		size  int
		start starter
	}{
		{"eager", 4, func(w *Comm, b []int64, tag int) (*Request, error) { return Isend(w, b, 1, tag) }},
		{"rendezvous", 50_000, func(w *Comm, b []int64, tag int) (*Request, error) { return Isend(w, b, 1, tag) }},
		{"synchronous", 4, func(w *Comm, b []int64, tag int) (*Request, error) { return Issend(w, b, 1, tag) }},
		{"persistent eager", 4, persistent},
		{"persistent rendezvous", 50_000, persistent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			world(t, 2, func(w *Comm) error {
				const tag, token = 5, 6
				if w.Rank() == 1 {
					for round := range 2 {
						// the first message, probed and then cancelled; the
						// second, probed and received
						if _, err := w.Probe(0, tag); err != nil {
							return err
						}
						if err := Send(w, []byte{byte(round)}, 0, token); err != nil {
							return err
						}
						if _, err := Recv(w, []byte{0}, 0, token); err != nil { // the sender's cancel is answered
							return err
						}
					}
					got := make([]int64, tc.size)
					st, err := Recv(w, got, AnySource, AnyTag)
					if err != nil {
						return err
					}
					if !slices.Equal(got, fill(0, 2, tc.size)) || st.Tag != tag {
						return fmt.Errorf("received %d..., tag %d: not the message sent after the cancelled one", got[0], st.Tag)
					}
					return Send(w, []byte{2}, 0, token)
				}
				first := fill(0, 1, tc.size)
				r, err := tc.start(w, first, tag)
				if err != nil {
					return err
				}
				if _, err := Recv(w, []byte{0}, 1, token); err != nil {
					return err
				}
				if err := errors.Join(r.Cancel(), r.Cancel()); err != nil { // twice is once
					return fmt.Errorf("cancel: %w", err)
				}
				st, err := r.Wait(context.Background())
				if err != nil || !st.Cancelled || st.Count != 0 {
					return fmt.Errorf("unmatched send: %+v, %v; want it cancelled", st, err)
				}
				if r.persistent {
					if st, err := r.Wait(context.Background()); err != nil || st.Cancelled {
						return fmt.Errorf("an inactive persistent request: %+v %v", st, err)
					}
					if err := r.Free(); err != nil {
						return err
					}
				}
				if err := Send(w, []byte{0}, 1, token); err != nil {
					return err
				}
				// the next message, which the receiver takes
				r, err = tc.start(w, fill(0, 2, tc.size), tag)
				if err != nil {
					return err
				}
				if _, err := Recv(w, []byte{0}, 1, token); err != nil {
					return err
				}
				if err := Send(w, []byte{0}, 1, token); err != nil {
					return err
				}
				if _, err := Recv(w, []byte{0}, 1, token); err != nil { // received it
					return err
				}
				if err := r.Cancel(); err != nil {
					return err
				}
				st, err = r.Wait(context.Background())
				if err != nil || st.Cancelled || st.Count != tc.size {
					return fmt.Errorf("matched send: %+v, %v; want it completed", st, err)
				}
				if r.persistent {
					return r.Free()
				}
				return nil
			})
		})
	}
}

// Test polls a cancelled send to its end; a send to ProcNull and an
// inactive request are never cancelled; Free of a send being cancelled
// lets it finish unobserved, and the message is still withdrawn.
func TestCancelSendEdgeCases(t *testing.T) {
	world(t, 2, func(w *Comm) error {
		if w.Rank() == 1 {
			if _, err := w.Probe(0, 1); err != nil {
				return err
			}
			if err := Send(w, []byte{0}, 0, 9); err != nil {
				return err
			}
			if _, err := w.Probe(0, 2); err != nil {
				return err
			}
			if err := Send(w, []byte{0}, 0, 9); err != nil {
				return err
			}
			// the freed send's cancel went before this: the message is gone
			if _, err := Recv(w, []byte{0}, 0, 9); err != nil {
				return err
			}
			_, ok, err := w.Iprobe(0, 2)
			return errors.Join(err, expect(!ok, "the freed send's message was not withdrawn"))
		}
		null, err := Isend(w, []int64{1}, ProcNull, 0)
		if err != nil {
			return err
		}
		if err := null.Cancel(); err != nil {
			return err
		}
		if st, err := null.Wait(context.Background()); err != nil || st.Cancelled {
			return fmt.Errorf("send to ProcNull: %+v %v", st, err)
		}
		if err := null.Cancel(); !errors.Is(err, ErrRequest) {
			return fmt.Errorf("cancel a completed request: %v, want ErrRequest", err)
		}

		r, err := Isend(w, []int64{1}, 1, 1)
		if err != nil {
			return err
		}
		if _, err := Recv(w, []byte{0}, 1, 9); err != nil {
			return err
		}
		if err := r.Cancel(); err != nil {
			return err
		}
		var st Status
		for done := false; !done; {
			if st, done, err = r.Test(); err != nil {
				return err
			}
		}
		if !st.Cancelled {
			return fmt.Errorf("tested send: %+v, want it cancelled", st)
		}

		r, err = Isend(w, []int64{2}, 1, 2)
		if err != nil {
			return err
		}
		if _, err := Recv(w, []byte{0}, 1, 9); err != nil {
			return err
		}
		if err := errors.Join(r.Cancel(), r.Free()); err != nil {
			return err
		}
		return Send(w, []byte{0}, 1, 9)
	})
}
