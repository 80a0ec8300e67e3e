// Command signalload is the signaling server's load generator: it holds,
// churns or forms many lightweight ranks (signaling clients only, no
// links behind them) against signaling servers on this machine, and
// reports what the servers spent. It is bounded (every mode ends by
// itself, every wait has a limit) and loopback only (it refuses a server
// URL off this host).
//
//	signalload idle  -n 10000 [-duration 30s] [-job-size 1000]
//	signalload churn -rate 1000 -duration 10s
//	signalload form  -n 1000
//
// # Servers
//
// By default signalload starts the servers itself, -servers of them
// (one unless said otherwise), each a child process: this same binary
// serving package signaling's Server on a loopback port with a generated
// secret, so that the clients' memory and CPU are not counted with the
// server's. A child also answers GET /stats (its memory after a forced
// GC, its CPU time and the Server's Stats) and serves /debug/pprof/ for
// heap and goroutine profiles (the address is printed). -server signal
// starts `signal serve` processes instead (-signal names the binary,
// -signal-args adds flags), sampled through their /metrics: the real
// server, whose heap figures are as its runtime last saw them, garbage
// included (no forced GC). -server embedded runs the server in this
// process (its CPU time then includes the clients'; memory is not
// reported). -url a,b,c names servers that run already (`signal serve`,
// a cluster's members; -secret is then their token secret), read through
// their /metrics too.
//
// # Modes
//
// idle joins -n ranks in jobs of -job-size (the last one smaller), waits
// until every job formed, holds them -duration while the server pings
// them, and reports the server's memory per joined connection (heap in
// use and goroutine stacks after a GC, and RSS, each less the figure
// before the connections) and its CPU time per second of the idle
// period. Every rank must still be joined at the end.
//
// churn joins and leaves: -rate times a second for -duration, a rank
// joins an open job that never forms (its size is the servers' largest)
// over the next URL in turn and leaves at once; it reports the rate
// achieved, the join latencies and the errors by code.
//
// form forms one job of -n ranks, rank r joining through URL r mod the
// URLs, and reports the time from the first join to the last Ready, then
// the messages the servers sent for the formation and for the departures
// when every rank leaves.
//
// The figures and the commands that reproduce them are in
// docs/signaling-load.md.
package main
