package meshmpi

// Yield lets other work run in the middle of a long computation.
//
// In a browser (GOOS=js) a rank runs on the page's one thread: while Go
// code computes, the page does not repaint, does not answer input, and
// delivers no data-channel messages, so the rank's own nonblocking
// operations make no progress and its peers wait for it. The browser
// only runs when every goroutine is blocked; runtime.Gosched is not
// enough. Yield blocks the calling goroutine for one MessageChannel round
// trip (about 0.1–0.2 ms), during which the browser handles its pending
// events and Go's other goroutines run. Call it every few milliseconds of
// computation, for example once per outer loop iteration of a kernel
// whose iteration takes about 1–10 ms: more often costs more round trips,
// less often makes the page stutter and messages wait. Waiting in Wait,
// Recv or a collective yields by itself.
//
// Elsewhere (native, WASI) Yield is runtime.Gosched: the runtime
// preempts long computations on its own, so Yield is cheap and optional.
func Yield() { yieldNow() }
