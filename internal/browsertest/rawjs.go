//go:build !js && !wasip1

package browsertest

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// rawJSPage is the page RawJS runs: plain JavaScript over the browser's
// RTCPeerConnection, no meshmpi (its comment says what it measures).
//
//go:embed rawjs.html
var rawJSPage []byte

// RawPlan is what RawJS measures, as ranksuite.Plan is for meshmpi's
// ranks: latency and bandwidth sizes, round trips of a latency size up
// to 8 KiB (fewer above), about how many bytes a bandwidth size streams,
// and rounds of each (the best is kept); the largest message a stream
// sends.
type RawPlan struct {
	LatSizes, BWSizes []int
	Iters             int
	StreamBytes       int
	Rounds            int
	// Frame is the largest message of a bandwidth stream: 0 means
	// 65,535 (meshmpi's frame before it took the browser's limit),
	// FrameLargest the largest the browser sends
	// (RTCSctpTransport.maxMessageSize: 262,144 in Chromium).
	Frame int
}

// FrameLargest is RawPlan.Frame for the browser's largest message.
const FrameLargest = -1

// RawFigure is one figure of RawJS: bench "latency" (one-way µs) or
// "bw" (MB/s, 10⁶ bytes per second).
type RawFigure struct {
	Bench string  `json:"bench"`
	Size  int     `json:"size"`
	Value float64 `json:"value"`
	Frame int     `json:"frame,omitempty"` // bw: the largest message the streams sent
}

// rawFrame is the page's ?frame for RawPlan.Frame f.
func rawFrame(f int) int {
	switch {
	case f == FrameLargest:
		return 0
	case f <= 0:
		return 65535
	}
	return f
}

// RawJSLimit bounds one RawJS run.
const RawJSLimit = 3 * time.Minute

// RawJS measures the data channel of the browser that bctx runs (Launch)
// without meshmpi, the anchor of meshmpi's browser link: one tab with
// both peer connections, or with twoTabs one end in each of two tabs (as
// two browser ranks run). Sizes of bandwidth must be at least 1.
func RawJS(bctx context.Context, twoTabs bool, p RawPlan) ([]RawFigure, error) {
	for _, s := range p.BWSizes {
		if s < 1 {
			return nil, fmt.Errorf("browsertest: raw data channel stream of %d-byte messages: want at least 1", s)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(rawJSPage)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	origin := "http://" + ln.Addr().String()

	ctx, cancel := context.WithTimeout(bctx, RawJSLimit)
	defer cancel()
	join := func(v []int) string {
		s := make([]string, len(v))
		for i, n := range v {
			s[i] = strconv.Itoa(n)
		}
		return strings.Join(s, ",")
	}
	q := url.Values{"lat": {join(p.LatSizes)}, "bw": {join(p.BWSizes)}, "iters": {strconv.Itoa(max(p.Iters, 1))},
		"bytes": {strconv.Itoa(p.StreamBytes)}, "rounds": {strconv.Itoa(max(p.Rounds, 1))}, "frame": {strconv.Itoa(rawFrame(p.Frame))},
		"id": {strconv.FormatInt(time.Now().UnixNano(), 36)}, "role": {"both"}}
	if twoTabs {
		q.Set("role", "echo")
		echo, err := OpenTab(ctx, origin)
		if err != nil {
			return nil, err
		}
		defer chromedp.Cancel(echo)
		if err := chromedp.Do(echo, chromedp.Navigate(origin+"/?"+q.Encode())); err != nil {
			return nil, fmt.Errorf("browsertest: raw data channel echo tab: %w", err)
		}
		q.Set("role", "drive")
	}
	tab, err := OpenTab(ctx, origin)
	if err != nil {
		return nil, err
	}
	defer chromedp.Cancel(tab)
	type result struct {
		Figures []RawFigure `json:"figures"`
		Error   string      `json:"error"`
	}
	err = chromedp.Do(tab, chromedp.Navigate(origin+"/?"+q.Encode()))
	var res result
	if err == nil {
		res, err = chromedp.Run(tab, chromedp.Evaluate[result]("window.rawjs", chromedp.EvalAwaitPromise))
	}
	if err == nil && res.Error != "" {
		err = errors.New(res.Error)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return nil, fmt.Errorf("browsertest: raw data channel (two tabs %v): %w", twoTabs, err)
	}
	return res.Figures, nil
}
