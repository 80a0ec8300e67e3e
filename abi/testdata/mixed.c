/* mixed.c: one side of a job whose other ranks are Go programs
 * (testdata/gorank): the same calls in the same order, on the same wire.
 * Prints "mixed ok" on every rank. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;

    int sum;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);

    double x[4] = {0};
    if (rank == 0)
        for (int i = 0; i < 4; i++)
            x[i] = 1.5 * i;
    OK(MPI_Bcast(x, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    CHECK(x[3] == 4.5, "bcast %g", x[3]);

    long long token = rank, got = -1;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Sendrecv(&token, 1, MPI_INT64_T, next, 5, &got, 1, MPI_INT64_T, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == prev, "ring %lld", got);

    double big[10000], all[10000];
    for (int i = 0; i < 10000; i++)
        big[i] = rank + i;
    OK(MPI_Reduce(big, all, 10000, MPI_DOUBLE, MPI_MAX, size - 1, MPI_COMM_WORLD));
    CHECK(rank != size - 1 || all[9999] == size - 1 + 9999, "reduce %g", all[9999]);

    int ranks[64];
    OK(MPI_Gather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, 1, MPI_COMM_WORLD));
    for (int i = 0; rank == 1 && i < size; i++)
        CHECK(ranks[i] == i, "gather[%d] = %d", i, ranks[i]);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("mixed ok: C rank %d of %d\n", rank, size);
    OK(MPI_Finalize());
    return 0;
}
