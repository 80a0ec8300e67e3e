//go:build !wasip1

package peer

import "context"

// chanSignaler is one side of an in-memory signaling path.
type chanSignaler struct {
	in  <-chan sigMsg
	out chan<- sigMsg
}

func newChanSignalers() (*chanSignaler, *chanSignaler) {
	ab, ba := make(chan sigMsg, 64), make(chan sigMsg, 64)
	return &chanSignaler{in: ba, out: ab}, &chanSignaler{in: ab, out: ba}
}

func (s *chanSignaler) Send(ctx context.Context, kind string, payload []byte) error {
	select {
	case s.out <- sigMsg{kind: kind, payload: append([]byte(nil), payload...)}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *chanSignaler) Recv(ctx context.Context) (string, []byte, error) {
	select {
	case m := <-s.in:
		return m.kind, m.payload, nil
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
}

// pattern is n bytes that differ by seed and position.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + seed*7 + i>>8)
	}
	return b
}
