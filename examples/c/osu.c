/*
 * osu.c: an OSU-style micro-benchmark of the C binding: the latency of an
 * 8-byte message (ping-pong between ranks 0 and 1, half the round trip),
 * the bandwidth of 1 MiB messages (rank 0 sends a window of 16 with
 * MPI_Isend, rank 1 receives them with MPI_Irecv, one MPI_Waitall and a
 * short acknowledgement per window) and the latency of an 8-byte
 * MPI_Allreduce on every rank. The same program runs as native ranks and
 * as WASI ranks, which is how the two are compared:
 *
 *   go run ./cmd/meshrun -n 2 --native examples/c/osu.c
 *   go run ./cmd/meshrun -n 2 examples/c/osu.c
 *
 * An optional argument scales the iterations (default 1; 0.1 for a quick
 * check); a second one, "latency", runs the latency test alone (abi's
 * TestOSULatency compares it with Go ranks running the same loop),
 * "bandwidth" the bandwidth test alone (a longer series of windows for the
 * same time: the WASI against native comparison of examples/c/README.md),
 * and "calls" measures what a call costs from C, without a link (MPI_Comm_rank,
 * then 8 B Send + Recv and Isend + Recv + Wait on MPI_COMM_SELF), on any
 * number of ranks, one alone too:
 *
 *   go run ./cmd/meshcc -O2 -o /tmp/osu examples/c/osu.c && /tmp/osu 1 calls
 *
 * Rank 0 prints one line per measure; the data are checked.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 16
#define BIG (1 << 20)

static int fail(const char *what)
{
    fprintf(stderr, "osu: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

/* calls measures the binding's cost per call from C, on MPI_COMM_SELF. */
static int calls(int rank, int n)
{
    int r;
    char a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {0};
    MPI_Request q;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    double t1 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Send(a, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF);
        MPI_Recv(b, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    }
    double t2 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Isend(a, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &q);
        MPI_Recv(b, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    double t3 = MPI_Wtime();
    if (r != rank || memcmp(a, b, 8) != 0)
        return fail("calls: wrong rank or data");
    if (rank == 0) {
        printf("osu: MPI_Comm_rank: %.1f ns\n", (t1 - t0) / n * 1e9);
        printf("osu: Send + Recv 8 B to self: %.1f ns\n", (t2 - t1) / n * 1e9);
        printf("osu: Isend + Recv + Wait 8 B to self: %.1f ns\n", (t3 - t2) / n * 1e9);
        printf("osu ok\n");
    }
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (scale <= 0)
        scale = 1.0;
    if (argc > 2 && strcmp(argv[2], "calls") == 0)
        return calls(rank, (int)(1000000 * scale) + 10);
    if (size < 2)
        return fail("needs 2 ranks or more");
    int lat_iters = (int)(10000 * scale) + 10, bw_iters = (int)(20 * scale) + 2, ar_iters = (int)(5000 * scale) + 10;
    int bw_only = argc > 2 && strcmp(argv[2], "bandwidth") == 0;
    if (bw_only)
        lat_iters = 0;

    /* latency: 8 bytes, ranks 0 and 1 */
    char small[8] = {0};
    double t0 = 0;
    for (int i = -10; i < lat_iters; i++) { /* 10 warm-up round trips */
        if (i == 0)
            t0 = MPI_Wtime();
        if (rank == 0) {
            small[0] = (char)i;
            MPI_Send(small, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(small, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (small[0] != (char)(i + 1))
                return fail("latency: wrong reply");
        } else if (rank == 1) {
            MPI_Recv(small, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            small[0]++;
            MPI_Send(small, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    double lat = lat_iters ? (MPI_Wtime() - t0) / lat_iters / 2 * 1e6 : 0;
    if (argc > 2 && strcmp(argv[2], "latency") == 0) {
        if (rank == 0) {
            printf("osu: latency 8 B: %.2f us\n", lat);
            printf("osu ok\n");
        }
        MPI_Finalize();
        return 0;
    }

    /* bandwidth: windows of 1 MiB messages, 0 → 1 */
    char *buf = malloc((size_t)WINDOW * BIG);
    if (!buf)
        return fail("no memory");
    memset(buf, rank, (size_t)WINDOW * BIG);
    MPI_Request reqs[WINDOW];
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -1; i < bw_iters; i++) { /* one warm-up window */
        if (i == 0)
            t0 = MPI_Wtime();
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(buf + (size_t)w * BIG, BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &reqs[w]);
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(small, 8, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(buf + (size_t)w * BIG, BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &reqs[w]);
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(small, 8, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    double bw = (double)bw_iters * WINDOW * BIG / (MPI_Wtime() - t0) / 1e6;
    if (rank == 1 && (buf[0] != 0 || buf[(size_t)WINDOW * BIG - 1] != 0))
        return fail("bandwidth: wrong data");
    free(buf);
    if (bw_only) {
        if (rank == 0) {
            printf("osu: bandwidth 1 MiB: %.1f MB/s\n", bw);
            printf("osu ok\n");
        }
        MPI_Finalize();
        return 0;
    }

    /* allreduce: 8 bytes on every rank */
    long long x = rank, sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -10; i < ar_iters; i++) {
        if (i == 0)
            t0 = MPI_Wtime();
        MPI_Allreduce(&x, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    double ar = (MPI_Wtime() - t0) / ar_iters * 1e6;
    if (sum != (long long)size * (size - 1) / 2)
        return fail("allreduce: wrong sum");

    if (rank == 0) {
        printf("osu: latency 8 B: %.2f us\n", lat);
        printf("osu: bandwidth 1 MiB: %.1f MB/s\n", bw);
        printf("osu: allreduce 8 B on %d ranks: %.2f us\n", size, ar);
        printf("osu ok\n");
    }
    MPI_Finalize();
    return 0;
}
