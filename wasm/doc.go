// Package wasm is the rank runtime for WebAssembly targets' WASI side:
// the guest↔host protocol through which a GOOS=wasip1 rank reaches its
// job, and the guest's end of it. Package wasm/host is the host's end
// (wazero); the root package uses this one under wasip1.
//
// # Why a host
//
// A WASI guest cannot open UDP sockets, so it cannot run WebRTC. Its host
// (a native process embedding a WebAssembly runtime) joins the job for it
// with signaling and pion, one full mesh member per guest with its own
// connections, and relays the guest's links. The guest runs the whole
// rank: the matching engine, the protocols and the collective engine;
// only its links live in the host. The guest links none of the WebRTC
// stack.
//
// # The stream
//
// Guest and host talk over one byte stream of length-prefixed messages
// (the layout is in proto.go, beside the message types). Under wazero the
// stream is a TCP connection on loopback: the host pre-opens a listener
// for the guest (file descriptor 3, as no directory is mounted) and
// connects to it; the guest accepts. The Go runtime polls that socket, so
// while one goroutine of the rank waits for the host the others keep
// running, nonblocking operations progress while the rank computes, and
// a rank waiting in Wait sleeps in poll_oneoff instead of spinning.
// (wazero's own poll_oneoff reports a non-blocking socket readable at
// once, which made a waiting guest spin a core; the wazero host replaces
// it with one that sleeps until the socket is readable: wasm/host's
// poll.go.) A
// blocking host call would freeze every goroutine of the guest, so the
// protocol never needs one: a runtime without socket pre-opens (wasmtime)
// can carry the same messages through two nonblocking host functions
// (send bytes, take bytes) and a guest that polls with back-off, and the
// host's relay (Serve) stays the same code over either.
//
// The host sets meshmpi.EnvHost in the guest's environment to
// "listener:FD:KEY": the listener's descriptor and a 32-byte key, half of
// which each side presents (HostHello, Join), so no other local process
// can pose as either end.
//
// # Conversation
//
//	host                                   guest
//	host-hello(version, key₁)      →
//	                               ←       join(version, key₂)      Init
//	(joins the job: signaling, mesh; waits until every rank is present)
//	welcome(rank, size, max, late, →       or refused(reason)
//	        settings)
//	                               ←       connect(r)               first message to r
//	link-up(r, max frame, window)  →       also for links the remote opened
//	data(r, frame)                 ↔       data(r, frame)
//	credit(r, bytes)               ↔       credit(r, bytes)
//	link-down(r, cause, reason)    →       dial failed, link lost, rank left
//	                               ←       name(id, op, service, port?)  Publish, Unpublish, Lookup
//	name-answer(id, class, text)   →       unless cancelled first
//	                               ←       name-cancel(id)          the caller's ctx ended
//	                               ←       report-ready             Init, if offered (below)
//	report                         →       prints its hang report
//	                               ←       telemetry(dropped, ops)  every interval, and before close,
//	                                                                if offered and the job's telemetry is on
//	                               ←       close(r)                 Finalize
//	(stream ends)                          the guest left the job
//
// A version mismatch is refused with both versions named. Ranks on the
// wire are checked against the job's limit; a message of unknown type,
// wrong size, or a length above MaxMessage is a protocol error
// (ErrProtocol): the stream closes, the guest fails, the host and its
// other ranks go on.
//
// # Offers
//
// A message added within a version is optional: the host offers it in
// the guest's environment (EnvOffers, a list of names), and only a guest
// that takes the offer says so, so neither end ever sends a message its
// peer was built before. The report messages came so (offer "report"):
// a guest that answers reports (the root package's under Init, when its
// host offered them) says report-ready once; from then on its host may
// send report whenever its launcher asks (host.Reports; meshrun on
// SIGQUIT and --report-hang), and the guest's reader prints, on the
// rank's standard error, what the rank is blocked in (the report a
// rank's EnvTimeout prints, "meshmpi: rank 2 is blocked in Recv(…)") and
// carries on. The telemetry message came so too (offer "telemetry"): a
// guest whose job's telemetry setting is on sends its host the
// operations it completed (and how many it dropped) every interval and
// once more before it closes its links in Finalize, and the host reports
// them to the signaling server with what it sees itself, the guest's
// links and its standard output and error. A guest that never said report-ready (built before the
// report messages, or not in its job yet) is never asked; a report
// before report-ready, or a report-ready to a host that did not offer
// it, is a protocol error.
//
// # Growth
//
// A job may grow (signaling's Growth): its welcome's max is the most
// ranks it may grow to (0: it cannot), and late says the guest is one of
// the late ranks, size … max-1, that joined after the job formed. Every
// table by rank, the guest's and the host's, holds Welcome.Limit ranks,
// max(size, max): a world rank links with late ranks as they come (their
// link-up arrives like any other), and a late rank links with the world.
//
// # Names
//
// The job's name service (MPI_Publish_name, MPI_Unpublish_name,
// MPI_Lookup_name; the signaling server keeps the names) goes through the
// host: each Guest.Publish, Unpublish or Lookup is one name request with
// an id of the guest's, answered by one name-answer with that id, so
// requests of many goroutines may be outstanding at once (at most
// MaxNameRequests: more wait in the guest, and a host that sees more
// closes the stream) and the guest's reader delivers the answers in any
// order. The answer's class is how it ended: ok (a lookup's text is the
// port), taken, unknown, limit (ErrNameTaken, ErrNameUnknown,
// ErrNameLimit on the guest's side) or failed (the text says what). A
// Lookup waits until the service is published; when its context ends the
// guest sends name-cancel and the host stops waiting and does not answer.
// An answer that crossed the cancel is dropped; one for an id the guest
// never sent is a protocol error. Service and port names are 1 … MaxName
// bytes.
//
// # Flow control
//
// peer.Link's backpressure contract (WriteFrame never blocks; it reports
// not ready above a high-water mark and HandleWritable follows) holds per
// link through credit, in both directions, so one slow link never stalls
// the others on the shared stream:
//
//   - guest → host: a guest link counts the bytes it wrote that the host
//     has not yet credited. At the window (link-up's, 4 MiB) WriteFrame
//     reports not ready; credit bringing it to a quarter of the window
//     calls HandleWritable. The host forwards each frame to the real link
//     at once and credits it back, except while that link is above its
//     own high-water mark: then it holds the credit until the link
//     drains. The guest's window thus mirrors the data channel's
//     buffered amount, one hop earlier.
//   - host → guest: the host queues a link's frames for the guest only up
//     to the window of bytes the guest has not credited; beyond it the
//     link's reader waits, so its data channel's own flow control pushes
//     back on the remote. The guest credits frames once its endpoint has
//     taken them.
//
// The host never blocks its reading of the stream (its writes go through
// a queue with a writer of their own), so the two directions cannot
// deadlock each other.
//
// # Departures
//
// A rank that leaves the job (the signaling server says so) arrives as
// link-down with CauseLeft, which the guest turns into the endpoint's
// FailPeer: everything pending with it fails with peer.ErrProcFailed. A
// lost link fails the same way. When the guest exits, traps or is
// stopped, its stream ends and the host leaves the job for it, so the
// other ranks see ErrProcFailed.
//
// A guest whose own rank the server declared failed (its host stopped
// answering pings: frozen, or cut off) or whose job ended under it is
// told evicted, with the reason, where every other rank's departure would
// have let a fault-tolerant program go on as a job of one: it ends as an
// evicted native rank does (Guest.OnEvicted, then its endpoint closes
// with the reason).
//
// # Host functions
//
// A runtime without socket pre-opens (wasmtime-go) carries the stream
// through three host functions instead, which the host provides in
// import module "meshmpi" and announces by setting meshmpi.EnvHost to
// "calls:1" (CallsEnv; 1 is CallsVersion). Both ends then use the zero
// key: no other process can reach the stream. Interface version 1 (i32
// values; ptr and len address the guest's linear memory):
//
//	stream_write(ptr, len i32) -> i32   the host takes up to len bytes at
//	                                    ptr for its end of the stream:
//	                                    n > 0 taken, 0 none fit now,
//	                                    -1 the stream is closed
//	stream_read(ptr, cap i32) -> i32    the host copies up to cap bytes of
//	                                    its end to ptr: n > 0 copied,
//	                                    0 nothing yet, -1 closed and
//	                                    nothing left
//	stream_close()                      the guest closes the stream: the
//	                                    host leaves the job for it
//
// None of them blocks, ever: a blocking host call would freeze every
// goroutine of the guest. The bytes are the stream of the sections
// above, unchanged. The guest polls: after bytes moved it polls again at
// once, yielding to its other goroutines, for half a millisecond (a
// runtime's sleep can be far coarser than a round trip: wasmtime's last
// at least a millisecond), then sleeps between polls, doubling from
// 20 µs to 1 ms. time.Sleep parks only the polling goroutine, and when no
// goroutine can run the Go runtime waits in poll_oneoff: the rank's
// goroutines keep running while it waits, and an idle rank wakes about
// once a millisecond instead of spinning. A host function may trap to
// stop its guest (the host stops a rank that way). A later interface
// that changes these signatures gets new names and a new version, so a
// mismatch fails at instantiation or at join, naming both versions.
// Every wasip1 rank imports these functions, so a host on any runtime
// defines them, as closed streams where it offers the socket instead.
package wasm
