// Meshbench measures meshmpi point-to-point performance the way the OSU
// micro-benchmarks do, through the public API only, so its figures compare
// with osu_latency and osu_bw runs of MPICH and Open MPI
// (reference/baseline.md beside DESIGN.md).
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
//   - all: latency, then bw.
//
// Sizes run over powers of two from -min (default 1 B; 0 adds the empty
// message first) to -max (default 16 MiB). Each size up to 8 KiB runs
// -iters iterations (default 10000, as osu_latency; bw runs a tenth as
// many, each moving a whole window), larger sizes proportionally fewer but
// never fewer than 10 (latency) or 5 (bw). A further tenth run first as a
// warm-up, left out of the timing. Rank 0 times the loop with time.Now.
//
// Links (-link): only memory links today, an in-process world of two
// ranks started by meshmpi.Run, which measures the matching engine, the
// protocols and the copies without a network. WebRTC, browser and WASI
// links come next.
//
// Reproduce with
//
//	go run ./cmd/meshbench -mode all
//	go run ./cmd/meshbench -mode latency -max 4096 -iters 10000
//
// The output follows OSU's: a comment line naming the benchmark, a comment
// header, then one line per size. Run it on an idle machine: figures vary
// with CPU frequency and with what else the two ranks' goroutines compete
// with.
package main
