// Meshbench measures meshmpi point-to-point and collective performance the
// way the OSU micro-benchmarks do, through the public API only, so its
// figures compare with osu_latency, osu_bw and the osu_<collective> runs of
// MPICH and Open MPI (reference/baseline.md beside DESIGN.md).
//
// Modes (-mode):
//
//   - latency (osu_latency): rank 0 sends a message of each size to rank 1
//     and rank 1 sends it back, iters times after a warm-up; the figure is
//     the one-way latency, half the mean round trip, in microseconds.
//   - bw (osu_bw): rank 0 starts a window of 64 Isends of the size, rank 1
//     64 Irecvs; both complete them with Waitall, and rank 1 answers with a
//     4-byte ack. The figure is size × 64 × iters / time in MB/s, with
//     MB = 10^6 bytes. As in osu_bw, the receives of a window share one
//     buffer and no data is checked.
//   - coll (osu_barrier, osu_bcast, osu_allreduce, osu_allgather,
//     osu_alltoall): one table per collective, world size and form. Every
//     rank times each call on its own; between calls the ranks meet in an
//     untimed Barrier (not for barrier itself); the figure is the mean over
//     the ranks of each rank's mean latency, in microseconds, as OSU's
//     "Avg Latency(us)". Bcast's root is rank 0; allreduce sums float64s.
//   - all: latency, then bw, then coll.
//
// Collectives (-mode coll):
//
//   - -colls (default barrier,bcast,allreduce,allgather,alltoall);
//   - -forms (default blocking,nonblocking,persistent): the blocking call;
//     the nonblocking I… call followed at once by Wait (osu_i<collective>'s
//     pure communication time, no overlap); the persistent form, made once
//     by …Init before the loop, then Start and Wait per iteration;
//   - -ranks (default 2,4,8,16): world sizes, each an in-process world;
//   - -sizes (default 8,1024,65536,1048576): bytes each rank contributes:
//     the bcast buffer, the allreduce vector (a multiple of 8: float64s),
//     the allgather send buffer, or the alltoall block sent to each rank
//     (osu_alltoall's size, so a rank sends ranks × size bytes in all).
//     barrier has a single line, size 0.
//
// A size up to 8 KiB runs a tenth of -iters (1000 by default, as
// osu_allreduce), larger sizes proportionally fewer; worlds of more than 4
// ranks divide that by ranks/4 (on a machine with fewer cores than ranks a
// collective's cost grows with both); never fewer than 10. A further tenth
// (at least one) runs first as a warm-up. With the defaults -mode coll takes
// about 20 s on a 2-core machine, most of it in 16-rank alltoall.
//
// Sizes run over powers of two from -min (default 1 B; 0 adds the empty
// message first) to -max (default 16 MiB). Each size up to 8 KiB runs
// -iters iterations (default 10000, as osu_latency; bw runs a tenth as
// many, each moving a whole window), larger sizes proportionally fewer but
// never fewer than 10 (latency) or 5 (bw). A further tenth run first as a
// warm-up, left out of the timing. Rank 0 times the loop with time.Now.
//
// Links (-link): only memory links today, an in-process world started by
// meshmpi.Run (two ranks for latency and bw), which measures the matching
// engine, the protocols, the collective engine and the copies without a
// network. WebRTC, browser and WASI links come next.
//
// Reproduce with
//
//	go run ./cmd/meshbench -mode all
//	go run ./cmd/meshbench -mode latency -max 4096 -iters 10000
//	go run ./cmd/meshbench -mode coll -colls allreduce -forms persistent -ranks 2,8
//
// The output follows OSU's: a comment line naming the benchmark (for
// collectives: the collective, the form, the links and the ranks), a
// comment header, then one line per size. Run it on an idle machine:
// figures vary with CPU frequency and with what else the ranks' goroutines
// compete with; worlds with more ranks than cores measure the Go scheduler
// as much as meshmpi.
package main
