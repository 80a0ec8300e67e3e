package ranksuite

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi"
)

// Tags of the echo protocol between a benchmark's driver and the rank
// that serves it (Echo).
const (
	TagPing   = iota // echo the message back
	TagSink          // take the message, answer nothing
	TagSync          // answer an empty message: every earlier one arrived
	TagStop          // return
	TagStream        // a stream follows: header (size, messages, window), the messages on TagSink, answered by an empty TagSync
)

// Echo serves the driver at rank from until it says stop. A stream is
// received as osu_bw's receiver does: a window of receives posted at
// once, sharing one buffer, then the next window.
func Echo(w *meshmpi.Comm, from int) error {
	buf := make([]byte, RendezvousBytes)
	var reqs []*meshmpi.Request
	for {
		st, err := meshmpi.Recv(w, buf, from, meshmpi.AnyTag)
		if err != nil {
			return err
		}
		switch st.Tag {
		case TagPing:
			err = meshmpi.Send(w, buf[:st.Count], from, TagPing)
		case TagSync:
			err = meshmpi.Send(w, buf[:0], from, TagSync)
		case TagStop:
			return nil
		case TagStream:
			var size, msgs, window int
			if size, msgs, window, err = streamHeader(buf[:st.Count]); err != nil {
				return err
			}
			if size > len(buf) {
				buf = make([]byte, size)
			}
			for done := 0; done < msgs && err == nil; done += window {
				reqs = reqs[:0]
				for range min(window, msgs-done) {
					r, err := meshmpi.Irecv(w, buf[:size], from, TagSink)
					if err != nil {
						return err
					}
					reqs = append(reqs, r)
				}
				err = waitall(reqs)
			}
			if err == nil {
				err = meshmpi.Send(w, buf[:0], from, TagSync)
			}
		}
		if err != nil {
			return err
		}
	}
}

// maxStream bounds a stream's message size: what an Echo rank agrees to
// allocate.
const maxStream = 64 << 20

func streamHeader(b []byte) (size, msgs, window int, err error) {
	if len(b) != 24 {
		return 0, 0, 0, fmt.Errorf("stream header of %d bytes, want 24: %w", len(b), meshmpi.ErrArg)
	}
	size = int(binary.LittleEndian.Uint64(b))
	msgs = int(binary.LittleEndian.Uint64(b[8:]))
	window = int(binary.LittleEndian.Uint64(b[16:]))
	if size < 0 || size > maxStream || msgs < 0 || window < 1 {
		return 0, 0, 0, fmt.Errorf("stream of %d messages of %d bytes in windows of %d: %w", msgs, size, window, meshmpi.ErrArg)
	}
	return size, msgs, window, nil
}

// PingPong times iters round trips of buf with the Echo rank peer after
// skip untimed ones and returns the mean round trip.
func PingPong(w *meshmpi.Comm, peer int, buf []byte, iters, skip int) (time.Duration, error) {
	var t0 time.Time
	for i := range skip + iters {
		if i == skip {
			t0 = time.Now()
		}
		if err := meshmpi.Send(w, buf, peer, TagPing); err != nil {
			return 0, err
		}
		if _, err := meshmpi.Recv(w, buf, peer, TagPing); err != nil {
			return 0, err
		}
	}
	return time.Since(t0) / time.Duration(max(iters, 1)), nil
}

// Stream sends msgs messages of buf to the Echo rank peer in windows of
// Isends (osu_bw's sender), waits for its acknowledgement, and returns
// the bandwidth in MB/s (10⁶ bytes per second).
func Stream(w *meshmpi.Comm, peer int, buf []byte, msgs, window int) (float64, error) {
	hdr := binary.LittleEndian.AppendUint64(nil, uint64(len(buf)))
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(msgs))
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(window))
	reqs := make([]*meshmpi.Request, 0, window)
	t0 := time.Now()
	if err := meshmpi.Send(w, hdr, peer, TagStream); err != nil {
		return 0, err
	}
	for done := 0; done < msgs; done += window {
		reqs = reqs[:0]
		for range min(window, msgs-done) {
			r, err := meshmpi.Isend(w, buf, peer, TagSink)
			if err != nil {
				return 0, err
			}
			reqs = append(reqs, r)
		}
		if err := waitall(reqs); err != nil {
			return 0, err
		}
	}
	if _, err := meshmpi.Recv(w, buf[:0], peer, TagSync); err != nil {
		return 0, err
	}
	return float64(msgs) * float64(len(buf)) / time.Since(t0).Seconds() / 1e6, nil
}

// StopEcho ends the Echo rank peer.
func StopEcho(w *meshmpi.Comm, peer int) error { return meshmpi.Send(w, []byte{}, peer, TagStop) }

// Plan is what Measure runs.
type Plan struct {
	LatSizes []int // ping-pong message sizes, bytes
	BWSizes  []int // stream message sizes, bytes
	// Iters is the timed round trips of a latency size up to 8 KiB
	// (proportionally fewer above, at least 10); a tenth more run first,
	// untimed.
	Iters int
	// StreamBytes is about how much a bandwidth size moves per round,
	// in at most Iters/10 windows (small messages) and at least two; one
	// window runs first, untimed.
	StreamBytes int
	Rounds      int // runs of every size; the best figure is kept
}

// Window is the number of messages of size in flight in a stream:
// osu_bw's 64, at most 4 MiB (the sender's data channel queue stays far
// below a browser's 16 MiB limit).
func Window(size int) int { return max(1, min(64, (4<<20)/max(size, 1))) }

// Figure is one measured figure.
type Figure struct {
	Bench string  // "latency": one-way latency in µs, half the mean round trip (osu_latency); "bw": MB/s (osu_bw)
	Size  int     // message size in bytes
	Value float64 // the best of the plan's rounds
}

// figurePrefix starts every line Figure.String prints.
const figurePrefix = "ranksuite figure "

// String is the line a driving rank prints and ParseFigures reads.
func (f Figure) String() string {
	return figurePrefix + f.Bench + " " + strconv.Itoa(f.Size) + " " + strconv.FormatFloat(f.Value, 'f', 3, 64)
}

// ParseFigures reads the figures from a driving rank's output.
func ParseFigures(out string) ([]Figure, error) {
	var figs []Figure
	for line := range strings.SplitSeq(out, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), figurePrefix)
		if !ok {
			continue
		}
		var f Figure
		if _, err := fmt.Sscanf(rest, "%s %d %g", &f.Bench, &f.Size, &f.Value); err != nil {
			return nil, fmt.Errorf("figure line %q: %w", line, err)
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// Measure drives the Echo rank peer through p and returns the figures,
// latency sizes first, in the plan's order. Latency is osu_latency's
// (half the mean round trip), bandwidth osu_bw's (windows of messages,
// then an acknowledgement).
func Measure(w *meshmpi.Comm, peer int, p Plan) ([]Figure, error) {
	largest := 0
	for _, s := range append(append([]int(nil), p.LatSizes...), p.BWSizes...) {
		if s < 0 || s > maxStream {
			return nil, fmt.Errorf("message size %d: want 0 … %d: %w", s, maxStream, meshmpi.ErrArg)
		}
		largest = max(largest, s)
	}
	buf := make([]byte, largest)
	rounds := max(p.Rounds, 1)
	var figs []Figure
	for _, size := range p.LatSizes {
		iters := max(p.Iters, 1)
		if size > 8<<10 {
			iters = max(iters*(8<<10)/size, 10)
		}
		f := Figure{Bench: "latency", Size: size}
		for r := range rounds {
			rtt, err := PingPong(w, peer, buf[:size], iters, max(iters/10, 1))
			if err != nil {
				return nil, fmt.Errorf("latency of %d B: %w", size, err)
			}
			us := float64(rtt.Nanoseconds()) / 2e3
			if r == 0 || us < f.Value {
				f.Value = us
			}
		}
		figs = append(figs, f)
	}
	for _, size := range p.BWSizes {
		win := Window(size)
		msgs := max(2*win, min(p.StreamBytes/max(size, 1), max(p.Iters/10, 1)*win))
		if _, err := Stream(w, peer, buf[:size], win, win); err != nil { // warm-up
			return nil, fmt.Errorf("bandwidth of %d B: %w", size, err)
		}
		f := Figure{Bench: "bw", Size: size}
		for range rounds {
			mbps, err := Stream(w, peer, buf[:size], msgs, win)
			if err != nil {
				return nil, fmt.Errorf("bandwidth of %d B: %w", size, err)
			}
			f.Value = max(f.Value, mbps)
		}
		figs = append(figs, f)
	}
	return figs, nil
}
