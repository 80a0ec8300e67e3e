package meshmpi

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// grequestLog records the callbacks of a generalized request in order.
type grequestLog struct {
	calls             []string
	queryErr, freeErr error
}

func (l *grequestLog) start(t *testing.T, c *Comm) *Request {
	t.Helper()
	r, err := GrequestStart(c,
		func(st *Status) error {
			l.calls = append(l.calls, "query")
			st.Source, st.Tag, st.Bytes = 3, 7, 40
			return l.queryErr
		},
		func() error { l.calls = append(l.calls, "free"); return l.freeErr },
		func(complete bool) error {
			if complete {
				l.calls = append(l.calls, "cancel(complete)")
			} else {
				l.calls = append(l.calls, "cancel")
			}
			return nil
		})
	require.NoError(t, err)
	return r
}

func TestGrequest(t *testing.T) {
	t.Parallel()
	errQuery, errFree := errors.New("query failed"), errors.New("free failed")
	for _, c := range []struct {
		name     string
		queryErr error
		freeErr  error
		run      func(t *testing.T, r *Request) error
		want     []string
		wantErr  error
	}{
		{name: "test, complete, wait", run: func(t *testing.T, r *Request) error {
			_, ok, err := r.Test()
			require.NoError(t, err)
			require.False(t, ok, "complete before GrequestComplete")
			require.NoError(t, GrequestComplete(r))
			st, err := r.Wait(nil)
			require.Equal(t, Status{Source: 3, Tag: 7, Bytes: 40}, st)
			return err
		}, want: []string{"query", "free"}},
		{name: "completed on another goroutine", run: func(t *testing.T, r *Request) error {
			go func() { _ = GrequestComplete(r) }()
			_, err := r.Wait(nil)
			return err
		}, want: []string{"query", "free"}},
		{name: "waitall wakes", run: func(t *testing.T, r *Request) error {
			go func() { _ = GrequestComplete(r) }()
			return Waitall(nil, []*Request{r, nil}, make([]Status, 2))
		}, want: []string{"query", "free"}},
		{name: "freed before complete", run: func(t *testing.T, r *Request) error {
			require.NoError(t, r.Free())
			return GrequestComplete(r)
		}, want: []string{"free"}},
		{name: "freed after complete", run: func(t *testing.T, r *Request) error {
			require.NoError(t, GrequestComplete(r))
			return r.Free()
		}, want: []string{"free"}},
		{name: "cancel before and after complete", run: func(t *testing.T, r *Request) error {
			require.NoError(t, r.Cancel())
			require.NoError(t, GrequestComplete(r))
			require.NoError(t, r.Cancel())
			_, err := r.Wait(nil)
			return err
		}, want: []string{"cancel", "cancel(complete)", "query", "free"}},
		{name: "completed twice", run: func(t *testing.T, r *Request) error {
			require.NoError(t, GrequestComplete(r))
			err := GrequestComplete(r)
			require.ErrorIs(t, err, ErrRequest)
			_, werr := r.Wait(nil)
			require.NoError(t, werr)
			return err
		}, want: []string{"query", "free"}, wantErr: ErrRequest},
		{name: "query's error, free still called", queryErr: errQuery, freeErr: errFree, run: func(t *testing.T, r *Request) error {
			require.NoError(t, GrequestComplete(r))
			st, err := r.Wait(nil)
			require.ErrorIs(t, st.Err, errQuery)
			return err
		}, want: []string{"query", "free"}, wantErr: errQuery},
		{name: "free's error", freeErr: errFree, run: func(t *testing.T, r *Request) error {
			require.NoError(t, GrequestComplete(r))
			_, ok, err := r.Test()
			require.True(t, ok)
			return err
		}, want: []string{"query", "free"}, wantErr: errFree},
		{name: "wait with a context that ends", run: func(t *testing.T, r *Request) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := r.Wait(ctx)
			require.ErrorIs(t, err, context.Canceled)
			require.NoError(t, GrequestComplete(r))
			_, err = r.Wait(nil)
			return err
		}, want: []string{"query", "free"}},
		{name: "start is not for it", run: func(t *testing.T, r *Request) error {
			err := r.Start()
			require.NoError(t, GrequestComplete(r))
			_, werr := r.Wait(nil)
			require.NoError(t, werr)
			return err
		}, want: []string{"query", "free"}, wantErr: ErrRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, Run(1, func(w *Comm) error {
				l := &grequestLog{queryErr: c.queryErr, freeErr: c.freeErr}
				r := l.start(t, w)
				err := c.run(t, r)
				if c.wantErr != nil {
					require.ErrorIs(t, err, c.wantErr)
				} else {
					require.NoError(t, err)
				}
				require.Equal(t, c.want, l.calls)
				return nil
			}))
		})
	}
}

func TestGrequestArgs(t *testing.T) {
	t.Parallel()
	q := func(*Status) error { return nil }
	f := func() error { return nil }
	k := func(bool) error { return nil }
	require.NoError(t, Run(2, func(w *Comm) error {
		for _, c := range []struct {
			name string
			comm *Comm
			q    GrequestQuery
			f    GrequestFree
			k    GrequestCancel
			want error
		}{
			{"nil comm", nil, q, f, k, ErrComm},
			{"nil query", w, nil, f, k, ErrArg},
			{"nil free", w, q, nil, k, ErrArg},
			{"nil cancel", w, q, f, nil, ErrArg},
		} {
			_, err := GrequestStart(c.comm, c.q, c.f, c.k)
			require.ErrorIs(t, err, c.want, c.name)
		}
		require.ErrorIs(t, GrequestComplete(nil), ErrRequest)
		// a point-to-point request is not a generalized one
		r, err := Irecv(w, make([]byte, 1), ProcNull, 0)
		require.NoError(t, err)
		require.ErrorIs(t, GrequestComplete(r), ErrRequest)
		_, err = r.Wait(nil)
		require.NoError(t, err)
		// a freed communicator
		d, err := w.Dup()
		require.NoError(t, err)
		require.NoError(t, d.Free())
		_, err = GrequestStart(d, q, f, k)
		require.ErrorIs(t, err, ErrComm)
		return nil
	}))
}
