//go:build !js && !wasip1

package browsertest

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
)

// RunResult is window.meshmpiRun of the run page (web/run.js): the
// rank's state, console and the performance.now() of each phase.
type RunResult struct {
	Phase  string             `json:"phase"`
	Rank   *int               `json:"rank"`
	Size   *int               `json:"size"`
	Status *int               `json:"status"` // nil until the program exits
	Error  *string            `json:"error"`
	Stdout string             `json:"stdout"`
	Stderr string             `json:"stderr"`
	Times  map[string]float64 `json:"times"` // ms since page load, by phase ("ready": the rank's Init returned)
}

// RunURL is the address of the run page of server base (http://host:port)
// that starts program as rank rank (-1: any) of job with token, with args
// on its command line.
func RunURL(base, program, job, token string, rank int, args []string) string {
	v := url.Values{"example": {program}, "job": {job}, "token": {token}, "arg": args}
	if rank >= 0 {
		v.Set("rank", fmt.Sprint(rank))
	}
	return base + "/run?" + v.Encode()
}

// exposed numbers the functions WaitRun exposes to pages: a name serves
// one wait.
var exposed atomic.Int64

// WaitRun waits until the run page in tab has exited, or limit has
// passed, and returns its state. The page tells of its exit itself: a
// function WaitRun exposes to it is called when the page's phase becomes
// "exited" (a MutationObserver on the phase it shows, which run.js
// updates with every change), so the wait neither polls nor depends on
// the page's timers, which a browser throttles in background tabs and a
// loaded machine delays.
func WaitRun(tab context.Context, limit time.Duration) (RunResult, error) {
	ctx, cancel := context.WithTimeout(tab, limit)
	defer cancel()
	exited := make(chan struct{}, 1)
	name := fmt.Sprintf("meshmpiRunExited%d", exposed.Add(1))
	notify := chromedp.ExposeFunc(name, func(context.Context, []any) (chromedp.Void, error) {
		select {
		case exited <- struct{}{}:
		default:
		}
		return chromedp.Void{}, nil
	})
	watch := chromedp.Evaluate[bool](`((notify) => {
		const done = () => !!window.meshmpiRun && window.meshmpiRun.phase === "exited";
		if (done()) { notify(); return true; }
		const shown = document.getElementById("phase") || document.body;
		const mo = new MutationObserver(() => { if (done()) { mo.disconnect(); notify(); } });
		mo.observe(shown, { childList: true, characterData: true, subtree: true });
		return false;
	})(window.` + name + `)`)
	err := chromedp.Do(ctx, notify)
	if err == nil {
		_, err = chromedp.Run(ctx, watch)
	}
	if err == nil {
		select {
		case <-exited:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		// what the page shows tells more than the timeout
		// (a frozen page answers nothing, so this is bounded too)
		peek, stop := context.WithTimeout(tab, 5*time.Second)
		r, _ := chromedp.Run(peek, chromedp.Evaluate[RunResult](`window.meshmpiRun || {}`))
		stop()
		return r, fmt.Errorf("browsertest: the run page did not finish within %v (phase %q, stderr %q): %w", limit, r.Phase, r.Stderr, err)
	}
	return chromedp.Run(ctx, chromedp.Evaluate[RunResult](`window.meshmpiRun`))
}
