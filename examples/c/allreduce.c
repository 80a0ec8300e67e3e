/*
 * allreduce.c: every rank contributes a vector and MPI_Allreduce combines
 * them with several operations and types; MPI_MAXLOC finds the rank that
 * holds the largest value; a nonblocking MPI_Iallreduce and an in-place
 * one give the same sums. Every rank checks against the closed forms: exit
 * status 1 if any is wrong.
 *
 *   go run ./cmd/meshcc -o allreduce examples/c/allreduce.c && go run ./cmd/meshrun -n 4 ./allreduce
 */
#include <stdio.h>
#include <mpi.h>

#define N 1000

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    static double x[N], sum[N], inplace[N];
    static int ix[N], imax[N];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int i = 0; i < N; i++) {
        x[i] = rank + i;
        inplace[i] = x[i];
        ix[i] = rank * i;
    }
    MPI_Allreduce(x, sum, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(ix, imax, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) {
        double want = (double)size * (size - 1) / 2 + (double)size * i;
        if (sum[i] != want || imax[i] != (size - 1) * i) {
            bad = 1;
            break;
        }
    }

    /* the same sum, nonblocking and in place */
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, inplace, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (req != MPI_REQUEST_NULL)
        bad = 1;
    for (int i = 0; i < N; i++)
        if (inplace[i] != sum[i])
            bad = 1;

    /* which rank has the largest value (rank 1's, or 0 alone) */
    struct { double value; int index; } mine, top;
    mine.value = rank == (size > 1 ? 1 : 0) ? 100.0 : (double)rank;
    mine.index = rank;
    MPI_Allreduce(&mine, &top, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    if (top.value != 100.0 || top.index != (size > 1 ? 1 : 0))
        bad = 1;

    /* a product and a logical and of unsigned chars */
    unsigned char flag = 1, all;
    MPI_Allreduce(&flag, &all, 1, MPI_UNSIGNED_CHAR, MPI_LAND, MPI_COMM_WORLD);
    long long two = 2, prod;
    MPI_Allreduce(&two, &prod, 1, MPI_LONG_LONG, MPI_PROD, MPI_COMM_WORLD);
    if (all != 1 || prod != 1LL << size)
        bad = 1;

    int anyBad;
    MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("allreduce of %d doubles on %d ranks: sum[0] = %g, sum[%d] = %g: %s\n",
               N, size, sum[0], N - 1, sum[N - 1], anyBad ? "WRONG" : "ok");
    MPI_Finalize();
    return anyBad ? 1 : 0;
}
