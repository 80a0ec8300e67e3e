//go:build !js && !wasip1

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pion/datachannel"
	"github.com/pion/webrtc/v4"

	"github.com/meshmpi/meshmpi/peer"
)

// The raw baseline: two pion PeerConnections in this process on loopback,
// set up as meshmpi's WebRTC link sets up its own (peer/link_webrtc.go),
// and the point-to-point benchmarks run straight over their data channel.
const (
	// rawMaxMessage is the largest data-channel message, as on the
	// link's pion path (peer.WebRTCConfig.API advertises it): a larger
	// message is written as several of at most this size.
	rawMaxMessage = peer.StandardWebRTCFrame
	rawSetup      = 20 * time.Second // bounds the pair's set-up
	rawStall      = 30 * time.Second // longest wait for the buffered amount to fall
)

var errRawClosed = errors.New("raw pair closed")

// rawPair is two detached data channels, 0 and 1, joined over loopback:
// negotiated (id 0, no DCEP round trip), ordered and reliable, messages
// of at most peer.StandardWebRTCFrame bytes (pion's path's frame), flow
// control on the buffered amount with the link's water marks
// (peer.DefaultHighWater, peer.DefaultLowWater) and UDP sockets with
// peer.DefaultSocketBuffer buffers.
type rawPair struct {
	pc  [2]*webrtc.PeerConnection
	dc  [2]*datachannel.DataChannel
	low [2]chan struct{} // cap 1: the side's buffered amount fell to low water

	done      chan struct{} // closed by close
	closeOnce sync.Once
}

// newRawPair connects two PeerConnections: side 0 offers, side 1 answers,
// each description carrying its (loopback host) candidates.
func newRawPair(ctx context.Context) (_ *rawPair, err error) {
	ctx, cancel := context.WithTimeout(ctx, rawSetup)
	defer cancel()
	p := &rawPair{done: make(chan struct{})}
	defer func() {
		if err != nil {
			p.close()
			err = fmt.Errorf("raw pion pair: %w", err)
		}
	}()
	type open struct {
		side int
		dc   *datachannel.DataChannel
		err  error
	}
	opened := make(chan open, 2)
	for i := range p.pc {
		api, err := peer.WebRTCConfig{Loopback: true}.API()
		if err != nil {
			return nil, err
		}
		if p.pc[i], err = api.NewPeerConnection(webrtc.Configuration{}); err != nil {
			return nil, err
		}
		negotiated, id := true, uint16(0)
		dc, err := p.pc[i].CreateDataChannel("raw", &webrtc.DataChannelInit{Negotiated: &negotiated, ID: &id})
		if err != nil {
			return nil, err
		}
		p.low[i] = make(chan struct{}, 1)
		dc.OnOpen(func() {
			rwc, err := dc.Detach()
			if err != nil {
				opened <- open{i, nil, err}
				return
			}
			d, ok := rwc.(*datachannel.DataChannel)
			if !ok {
				rwc.Close()
				opened <- open{i, nil, fmt.Errorf("detached channel is a %T", rwc)}
				return
			}
			low := p.low[i]
			d.SetBufferedAmountLowThreshold(peer.DefaultLowWater)
			d.OnBufferedAmountLow(func() {
				select {
				case low <- struct{}{}:
				default:
				}
			})
			opened <- open{i, d, nil}
		})
	}
	describe := func(pc *webrtc.PeerConnection, d webrtc.SessionDescription) (webrtc.SessionDescription, error) {
		gathered := webrtc.GatheringCompletePromise(pc)
		if err := pc.SetLocalDescription(d); err != nil {
			return d, err
		}
		select {
		case <-gathered:
			return *pc.LocalDescription(), nil
		case <-ctx.Done():
			return d, fmt.Errorf("gathering: %w", ctx.Err())
		}
	}
	offer, err := p.pc[0].CreateOffer(nil)
	if err != nil {
		return nil, err
	}
	if offer, err = describe(p.pc[0], offer); err != nil {
		return nil, err
	}
	if err := p.pc[1].SetRemoteDescription(offer); err != nil {
		return nil, err
	}
	answer, err := p.pc[1].CreateAnswer(nil)
	if err != nil {
		return nil, err
	}
	if answer, err = describe(p.pc[1], answer); err != nil {
		return nil, err
	}
	if err := p.pc[0].SetRemoteDescription(answer); err != nil {
		return nil, err
	}
	for range 2 {
		select {
		case o := <-opened:
			if o.err != nil {
				return nil, fmt.Errorf("detach: %w", o.err)
			}
			p.dc[o.side] = o.dc
		case <-ctx.Done():
			return nil, fmt.Errorf("data channel not open: %w", ctx.Err())
		}
	}
	return p, nil
}

// close closes both channels and both PeerConnections; reads and writes
// in progress fail.
func (p *rawPair) close() {
	p.closeOnce.Do(func() {
		close(p.done)
		for i := range p.pc {
			if p.dc[i] != nil {
				_ = p.dc[i].Close()
			}
		}
		for i := range p.pc {
			if p.pc[i] != nil {
				_ = p.pc[i].GracefulClose()
			}
		}
	})
}

// send writes msg from side as messages of at most rawMaxMessage bytes,
// waiting for the low-water event whenever the buffered amount reaches the
// high-water mark, as the link does.
func (p *rawPair) send(side int, msg []byte) error {
	dc := p.dc[side]
	for off := 0; off < len(msg); off += rawMaxMessage {
		if _, err := dc.Write(msg[off:min(off+rawMaxMessage, len(msg))]); err != nil {
			return err
		}
		if dc.BufferedAmount() >= peer.DefaultHighWater {
			t := time.NewTimer(rawStall)
			select {
			case <-p.low[side]:
				t.Stop()
			case <-p.done:
				t.Stop()
				return errRawClosed
			case <-t.C:
				return fmt.Errorf("buffered amount stuck at %d bytes for %v", dc.BufferedAmount(), rawStall)
			}
		}
	}
	return nil
}

// recv reads msgs messages of len(dst) bytes each on side, copying each
// into dst (so the receives of a window share one buffer, as in osu_bw).
// rbuf holds one data-channel message.
func (p *rawPair) recv(side int, rbuf, dst []byte, msgs int) error {
	for n, total := 0, msgs*len(dst); n < total; {
		k, err := p.dc[side].Read(rbuf)
		if err != nil {
			return err
		}
		copy(dst[n%len(dst):], rbuf[:k])
		n += k
	}
	return nil
}

// rawLatency is latency's ping-pong over the raw pair: one-way latency in
// µs. Side 1 echoes. bufs are the sides' message buffers.
func (p *rawPair) rawLatency(bufs [2][]byte, size int, pl plan) (float64, error) {
	echo := make(chan error, 1)
	go func() {
		rbuf, msg := make([]byte, rawMaxMessage), bufs[1][:size]
		for range pl.iters + pl.skip {
			if err := p.recv(1, rbuf, msg, 1); err != nil {
				echo <- err
				return
			}
			if err := p.send(1, msg); err != nil {
				echo <- err
				return
			}
		}
		echo <- nil
	}()
	rbuf, msg := make([]byte, rawMaxMessage), bufs[0][:size]
	var start time.Time
	for i := range pl.iters + pl.skip {
		if i == pl.skip {
			start = time.Now()
		}
		err := p.send(0, msg)
		if err == nil {
			err = p.recv(0, rbuf, msg, 1)
		}
		if err != nil {
			p.close()
			return 0, errors.Join(err, <-echo)
		}
	}
	elapsed := time.Since(start)
	if err := <-echo; err != nil {
		return 0, err
	}
	return elapsed.Seconds() * 1e6 / float64(2*pl.iters), nil
}

// rawBandwidth is bandwidth over the raw pair, in MB/s: side 0 writes a
// window of pl.window messages of size bytes (each in writes of at most rawMaxMessage bytes),
// side 1 reads them all and answers with a 4-byte ack. bufs are the sides'
// send and receive buffers, 2·size bytes each.
func (p *rawPair) rawBandwidth(bufs [2][]byte, size int, pl plan) (float64, error) {
	acked := make(chan error, 1)
	go func() {
		rbuf, dst, ack := make([]byte, rawMaxMessage), bufs[1][size:2*size], make([]byte, ackBytes)
		for range pl.iters + pl.skip {
			if err := p.recv(1, rbuf, dst, pl.window); err != nil {
				acked <- err
				return
			}
			if err := p.send(1, ack); err != nil {
				acked <- err
				return
			}
		}
		acked <- nil
	}()
	rbuf, msg, ack := make([]byte, rawMaxMessage), bufs[0][:size], make([]byte, ackBytes)
	var start time.Time
	for i := range pl.iters + pl.skip {
		if i == pl.skip {
			start = time.Now()
		}
		var err error
		for range pl.window {
			if err = p.send(0, msg); err != nil {
				break
			}
		}
		if err == nil {
			err = p.recv(0, rbuf, ack, 1)
		}
		if err != nil {
			p.close()
			return 0, errors.Join(err, <-acked)
		}
	}
	elapsed := time.Since(start)
	if err := <-acked; err != nil {
		return 0, err
	}
	return float64(size) * float64(pl.window) * float64(pl.iters) / elapsed.Seconds() / 1e6, nil
}

// rawBench runs one point-to-point benchmark over a raw pair, with the
// plans the benchmark has over WebRTC links.
//
// Each side holds the buffers a meshmpi rank of runBench holds and
// receives into them. That is fair, and it matters: pion allocates for
// every SCTP packet, so throughput depends on how often the collector
// runs, which GOGC paces by the live heap (at 1 MiB, 64 MiB of live
// buffers gave the raw pair about 75 MB/s instead of 52).
type rawBench struct {
	p    *rawPair
	b    bench
	bufs [2][]byte
	base int
}

func newRawBench(p *rawPair, b bench, sizes []int, base int) *rawBench {
	largest := 0
	if len(sizes) > 0 {
		largest = sizes[len(sizes)-1]
	}
	return &rawBench{p: p, b: b, base: base,
		bufs: [2][]byte{make([]byte, b.scratch*largest), make([]byte, b.scratch*largest)}}
}

// measure returns the figure for one size; 0 for the empty message, which
// the raw channel does not send.
func (r *rawBench) measure(size int) (float64, error) {
	if size == 0 {
		return 0, nil
	}
	pl := r.b.plan(linkWebRTC, r.base, size)
	if r.b.name == "latency" {
		return r.p.rawLatency(r.bufs, size, pl)
	}
	return r.p.rawBandwidth(r.bufs, size, pl)
}

// printRaw prints the raw table of b: one line per size, none for the
// empty message.
func printRaw(out io.Writer, b bench, sizes []int, figs []float64, rounds int) {
	fmt.Fprintf(out, "# raw pion %s (detached data channel, loopback, one process%s)\n", b.name, bestOf(rounds))
	fmt.Fprintf(out, "%-2s%8s%20s\n", "#", "Size", b.column)
	for i, size := range sizes {
		if size > 0 {
			fmt.Fprintf(out, "%10d%20.2f\n", size, figs[i])
		}
	}
}

// runRaw runs b over a raw pair of its own and prints its table, the best
// of rounds runs of each size.
func runRaw(out io.Writer, b bench, sizes []int, base, rounds int) error {
	p, err := newRawPair(context.Background())
	if err != nil {
		return err
	}
	defer p.close()
	rb := newRawBench(p, b, sizes, base)
	figs := make([]float64, len(sizes))
	for i, size := range sizes {
		for r := range rounds {
			fig, err := rb.measure(size)
			if err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
			figs[i] = b.best(figs[i], fig, r > 0)
		}
	}
	printRaw(out, b, sizes, figs, rounds)
	return nil
}
