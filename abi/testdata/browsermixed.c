/* browsermixed.c: the C side of a job whose other ranks are Go programs
 * in browser tabs (testdata/browserrank): the same calls in the same
 * order, on the same wire. Every rank first exchanges messages with every
 * other one, eager and rendezvous-sized (so every pair of ranks links,
 * and the tabs can check each of their links), then the collectives run
 * with roots on both kinds of rank. Prints "mixed ok" on every rank. */
#include <mpi.h>
#include <string.h>
#include "check.h"

#define MAXRANKS 8
#define BIG 50000 /* doubles: 400 KB, a rendezvous send cut into many data-channel messages */

/* word is what rank from sends rank to in message i of the all-pairs step */
static double word(int from, int to, int i) { return from * 1e6 + to * 1e3 + (i % 997); }

static double bigout[MAXRANKS][BIG], bigin[MAXRANKS][BIG];

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;
    CHECK(size <= MAXRANKS, "size %d", size);

    /* all pairs: a small message (tag 1) and a big one (tag 2) to and
     * from every other rank, all posted at once */
    MPI_Request reqs[4 * MAXRANKS];
    int small[MAXRANKS][2], nreq = 0;
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        for (int i = 0; i < BIG; i++)
            bigout[p][i] = word(rank, p, i);
        small[p][0] = -1;
        OK(MPI_Irecv(small[p], 2, MPI_INT, p, 1, MPI_COMM_WORLD, &reqs[nreq++]));
        OK(MPI_Irecv(bigin[p], BIG, MPI_DOUBLE, p, 2, MPI_COMM_WORLD, &reqs[nreq++]));
    }
    int mine[2] = {rank, size};
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        OK(MPI_Isend(mine, 2, MPI_INT, p, 1, MPI_COMM_WORLD, &reqs[nreq++]));
        OK(MPI_Isend(bigout[p], BIG, MPI_DOUBLE, p, 2, MPI_COMM_WORLD, &reqs[nreq++]));
    }
    MPI_Status st[4 * MAXRANKS];
    OK(MPI_Waitall(nreq, reqs, st));
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        CHECK(small[p][0] == p && small[p][1] == size, "small from %d: %d %d", p, small[p][0], small[p][1]);
        for (int i = 0; i < BIG; i++)
            CHECK(bigin[p][i] == word(p, rank, i), "big from %d [%d]: %g", p, i, bigin[p][i]);
    }

    /* a ring of Sendrecv with a status to check */
    long long token = rank, got = -1;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Status status;
    OK(MPI_Sendrecv(&token, 1, MPI_INT64_T, next, 5, &got, 1, MPI_INT64_T, prev, 5, MPI_COMM_WORLD, &status));
    int count;
    OK(MPI_Get_count(&status, MPI_INT64_T, &count));
    CHECK(got == prev && status.MPI_SOURCE == prev && status.MPI_TAG == 5 && count == 1, "ring %lld from %d tag %d count %d",
          got, status.MPI_SOURCE, status.MPI_TAG, count);

    /* collectives, rooted on the first rank and on the last */
    int sum;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);

    double x[4] = {0};
    if (rank == 0)
        for (int i = 0; i < 4; i++)
            x[i] = 1.5 * i;
    OK(MPI_Bcast(x, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    CHECK(x[3] == 4.5, "bcast %g", x[3]);

    static double big[BIG], all[BIG];
    for (int i = 0; i < BIG; i++)
        big[i] = rank + i;
    OK(MPI_Reduce(big, all, BIG, MPI_DOUBLE, MPI_MAX, size - 1, MPI_COMM_WORLD));
    for (int i = 0; rank == size - 1 && i < BIG; i++)
        CHECK(all[i] == size - 1 + i, "reduce[%d] %g", i, all[i]);

    int ranks[MAXRANKS];
    memset(ranks, 0xff, sizeof ranks);
    OK(MPI_Allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(ranks[i] == i, "allgather[%d] = %d", i, ranks[i]);

    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("mixed ok: C rank %d of %d\n", rank, size);
    OK(MPI_Finalize());
    return 0;
}
