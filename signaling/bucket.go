package signaling

import "time"

// bucket is a token bucket: rate tokens per second, at most burst. The
// server enforces a connection's message rate with one; the client paces
// itself with another, so a rank opening many connections at once slows
// down instead of being cut off.
type bucket struct {
	rate, burst, tokens float64
	last                time.Time
}

// take spends a token if there is one, else reports how long until there
// is (and spends nothing).
func (b *bucket) take(now time.Time) (wait time.Duration) {
	if b.last.IsZero() {
		b.tokens = b.burst
	} else {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}
