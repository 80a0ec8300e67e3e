// Meshbench measures meshmpi point-to-point and collective performance the
// way the OSU micro-benchmarks do, through the public API only, so its
// figures compare with osu_latency, osu_bw and the osu_<collective> runs of
// MPICH and Open MPI (reference/baseline.md beside DESIGN.md). Over WebRTC
// it also measures a raw pion data channel as the baseline meshmpi is held
// to, how long a job takes to form and a link to open, and what a peer
// connection costs.
//
// Links (-link):
//
//   - memory (the default): an in-process world started by meshmpi.Run,
//     which measures the matching engine, the protocols, the collective
//     engine and the copies without a network.
//
//   - webrtc: a whole job in this process over real pion data channels on
//     loopback. meshbench starts an embedded signaling server
//     (signaling.ListenLocal), mints a token for a fresh job per world
//     (job setting net=loopback) and runs meshmpi.Run with
//     meshmpi.WithJob. Links open lazily: the untimed synchronization
//     before the first size sets them up.
//
//   - browser-native, browser-browser, wasi-native: the cross-target
//     links, a job of two ranks of the kinds named (internal/mixedjob):
//     a browser rank is a run page in a tab of a headless chromium
//     (Debian's, started with the browser tests' flags; .ci/install-browser
//     installs it), running the rank program built for GOOS=js; a WASI
//     rank is a wazero guest running it built for GOOS=wasip1; a native
//     rank is a goroutine of meshbench running the same Go code
//     (internal/ranksuite). meshbench builds the program with the go
//     command, so it runs from inside the module (go run
//     ./cmd/meshbench). Rank 0 drives and times, rank 1 echoes; a native
//     rank drives where there is one (its clock is the finer), and over
//     browser-browser tab 0 drives and meshbench reads the figures from
//     its console. Only -mode latency, bw and all (both) apply. Unless
//     given, sizes are 8 B for latency and 64 KiB and 1 MiB for bw,
//     -iters is 1000 round trips and -rounds 3. A browser link adds a
//     table of the time from page load to the rank being ready.
//
// The benchmark bodies are the same for memory and webrtc links; only the
// world differs. The cross-target links run ranksuite's driver and echo
// rank (the mixed-job benchmarks' bodies): latency is the same
// ping-pong, half the mean round trip; bw sends osu_bw's windows (64
// messages, at most 4 MiB in flight) which the echo rank receives a
// window of Irecvs at a time, then answers with an empty
// acknowledgement. A bw size moves about 16 MiB × iters/1000 a round, in
// at most iters/10 windows and at least two, after one untimed window.
//
// Modes (-mode):
//
//   - latency (osu_latency): rank 0 sends a message of each size to rank 1
//     and rank 1 sends it back, iters times after a warm-up; the figure is
//     the one-way latency, half the mean round trip, in microseconds.
//   - bw (osu_bw): rank 0 starts a window of Isends of the size, rank 1 as
//     many Irecvs; both complete them with Waitall, and rank 1 answers with
//     a 4-byte ack. The figure is size × window × iters / time in MB/s,
//     with MB = 10^6 bytes. As in osu_bw, the receives of a window share
//     one buffer and no data is checked. The window is osu_bw's 64
//     messages; over webrtc it holds at most 4 MiB (64 × 64 KiB, 4 × 1 MiB,
//     1 × 16 MiB).
//   - raw: the baseline alone, latency and bw over two pion PeerConnections
//     in this process on loopback, set up as meshmpi's link is (detached,
//     negotiated data channel; loopback host candidates only, UDP4, no
//     mDNS; 4 MiB UDP socket buffers; at most 65535-byte messages, a larger
//     message written in several; flow control on the buffered amount with
//     the link's 1 MiB / 256 KiB high and low water marks). Raw latency is
//     the same ping-pong; raw bw writes the same window of messages, then
//     the receiver, having read them all, writes the 4-byte ack. Each side
//     receives into a buffer as large as a meshmpi rank's.
//   - coll (osu_barrier, osu_bcast, osu_reduce, osu_allreduce,
//     osu_allgather, osu_alltoall, osu_scan, osu_reduce_scatter): one table per collective, world size and form. Every
//     rank times each call on its own; between calls the ranks meet in an
//     untimed Barrier (not for barrier itself); the figure is the mean over
//     the ranks of each rank's mean latency, in microseconds, as OSU's
//     "Avg Latency(us)". Bcast's and reduce's root is rank 0; reduce,
//     allreduce, scan and reducescatterblock sum float64s.
//   - ready (always over WebRTC): for each job size of -ready-ranks
//     (default 4,16), -reps times (default 5): n goroutines call
//     meshmpi.Join, one per rank, on a fresh job; Ready is the time from
//     the first call until every Join returned. Then rank 0 sends 8 B to
//     rank 1: First is the time until rank 1's Recv returns, which
//     includes opening their link (rank 0, the lower rank, dials); Next is
//     the same for a second message over the open link. Printed: min and
//     median in milliseconds (median only for Next).
//   - conncost (always over WebRTC): for each k of -cost-ranks (default
//     2,9), rank 0 of a fresh k-rank job exchanges 8 B with every other
//     rank, opening k-1 connections. The figures are the process's growth
//     over that exchange divided by k-1: goroutines, HeapInuse and VmRSS
//     (from /proc/self/status; -1 where there is none), each read after
//     the goroutine count settles and debug.FreeOSMemory. Both ends of
//     every connection live in this process, so each figure covers two
//     ends; one end costs about half. An unprinted 2-rank job runs first,
//     so the one-time costs of a process's first connection stay out.
//   - all: latency, bw and coll; over webrtc also ready and conncost.
//
// Over webrtc, latency and bw run with the raw baseline interleaved: after
// each of meshmpi's rounds for a size, rank 0 runs the raw pair's for the
// same size while rank 1 waits, so both see the same machine load and the same
// live heap. (The heap matters: pion allocates for every SCTP packet, so
// throughput follows how often the collector runs, which GOGC paces by the
// live heap.) A comparison table follows: meshmpi's figure, raw pion's,
// and Ratio = meshmpi/raw for both (latency: lower is better, bw: higher
// is better), against the bars meshmpi must meet: 8 B latency at most
// 1.25 × raw, bandwidth at least 0.80 × raw at every size.
//
// Sizes (latency, bw, raw) run over powers of two from -min (default 1 B;
// 0 adds the empty message first, which raw leaves out) to -max (default
// 16 MiB). Over webrtc and in -mode raw, unless -min or -max is given,
// latency runs 8 B and bw 64 KiB, 1 MiB and 16 MiB. Each latency size up to 8 KiB runs
// -iters iterations (default 10000, as osu_latency), larger sizes
// proportionally fewer but never fewer than 10. bw runs a tenth as many
// (each moves a whole window), never fewer than 5; over webrtc (60–90 MB/s
// on loopback) a size moves at most about 48 MiB at the default -iters
// (12 windows of 64 KiB or 1 MiB messages, 3 of 16 MiB), proportionally
// less with a smaller -iters, never fewer than 2 windows. A further tenth
// (at least one) runs first as a warm-up, left out of the timing. Rank 0
// times the loop with time.Now.
//
// -rounds (default 1; over webrtc and in -mode raw 3) runs each latency, bw and raw size
// that many times and prints the best figure (lowest latency, highest
// bandwidth): the run least disturbed by other load. Over webrtc the
// rounds alternate meshmpi and raw pion, so a burst of other load hits
// both alike.
//
// Collectives (-mode coll):
//
//   - -colls (default barrier,bcast,allreduce,allgather,alltoall,scan,
//     reducescatterblock; over webrtc allreduce);
//   - -forms (default blocking,nonblocking,persistent): the blocking call;
//     the nonblocking I… call followed at once by Wait (osu_i<collective>'s
//     pure communication time, no overlap); the persistent form, made once
//     by …Init before the loop, then Start and Wait per iteration;
//   - -ranks (default 2,4,8,16; over webrtc 4): world sizes, each a fresh
//     world;
//   - -sizes (default 8,1024,65536,1048576; over webrtc 8): bytes each rank
//     contributes: the bcast buffer, the allreduce and scan vectors (a
//     multiple of 8: float64s), the allgather send buffer, the alltoall
//     block sent to each rank (osu_alltoall's size, so a rank sends ranks ×
//     size bytes in all), or the reducescatterblock input, of which each
//     rank gets size/ranks bytes (osu_reduce_scatter's size). barrier has a
//     single line, size 0;
//   - -alg (default none: the rules' choice): an algorithm forced on every
//     call (meshmpi.Algorithm), so variants can be timed side by side in
//     interleaved runs; every collective of -colls must have it;
//   - -segment (default 0: none): meshmpi.Segment's bound on one message of
//     the algorithms that segment or pipeline;
//   - -mpich run.sh (memory links): the anchor in the same run. Each of
//     -rounds (default 5) runs meshmpi's tables on each -ranks count and
//     then the MPI reference (run.sh N mpich shm: collbench.c, the same
//     OSU convention; -openmpi adds Open MPI), and meshbench prints every
//     figure and a table of medians with meshmpi's ratio to the better
//     reference. The reference has barrier, bcast, reduce, allreduce,
//     allgather and alltoall blocking, and allreduce's nonblocking and
//     persistent forms (back to back); the other rows show "-".
//
// A collective size up to 8 KiB runs a tenth of -iters (1000 by default,
// as osu_allreduce), larger sizes proportionally fewer; worlds of more
// than 4 ranks divide that by ranks/4 (on a machine with fewer cores than
// ranks a collective's cost grows with both); never fewer than 10, plus a
// tenth as warm-up. With the defaults -mode coll takes about 20 s on a
// 2-core machine over memory links, most of it in 16-rank alltoall; the
// default run over webrtc (every mode) about 30 s.
//
// Reproduce with
//
//	go run ./cmd/meshbench -mode all
//	go run ./cmd/meshbench -mode latency -max 4096 -iters 10000
//	go run ./cmd/meshbench -mode coll -colls allreduce -forms persistent -ranks 2,8
//	go run ./cmd/meshbench -mode coll -colls allgather -forms blocking -ranks 8 -alg gather_bcast
//	go run ./cmd/meshbench -mode coll -ranks 2 -sizes 8 -forms blocking -mpich ../shared/reference/mpi-bench/run.sh
//	go run ./cmd/meshbench -link webrtc
//	go run ./cmd/meshbench -link webrtc -mode bw -min 65536 -max 1048576
//	go run ./cmd/meshbench -link webrtc -mode coll -ranks 4 -colls allreduce -sizes 8
//	go run ./cmd/meshbench -mode raw
//	go run ./cmd/meshbench -mode ready -ready-ranks 4,16 -reps 5
//	go run ./cmd/meshbench -mode conncost -cost-ranks 2,9,17
//	go run ./cmd/meshbench -link browser-native
//	go run ./cmd/meshbench -link browser-browser -mode latency -iters 2000
//	go run ./cmd/meshbench -link wasi-native
//
// The output follows OSU's: a comment line naming the benchmark (for
// collectives: the collective, the form, the links and the ranks), a
// comment header, then one line per size; the comparison, ready and
// conncost tables name each column in one word. Tables are separated by
// blank lines. Run it on an idle machine: figures vary with CPU frequency
// and with what else the ranks' goroutines compete with; worlds with more
// ranks than cores measure the Go scheduler as much as meshmpi, and over
// WebRTC, where pion's SCTP and DTLS keep both cores busy, any other load
// shows directly in the bandwidth.
package main
