/*
 * pi.c: pi by the midpoint rule on 4/(1+x^2) over [0,1], each rank summing
 * every size-th interval, the sums combined by MPI_Reduce at rank 0 and
 * broadcast back (the first program of most MPI courses). Every rank
 * checks the answer: exit status 1 if it is wrong.
 *
 *   go run ./cmd/meshcc -o pi examples/c/pi.c && go run ./cmd/meshrun -n 4 ./pi
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

int main(int argc, char **argv)
{
    const long intervals = 1000000;
    int rank, size;
    double local = 0, pi = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    double h = 1.0 / (double)intervals;
    for (long i = rank; i < intervals; i += size) {
        double x = h * ((double)i + 0.5);
        local += 4.0 / (1.0 + x * x);
    }
    local *= h;

    MPI_Reduce(&local, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(&pi, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    int ok = fabs(pi - M_PI) < 1e-9;
    if (rank == 0)
        printf("pi ≈ %.12f (error %.2e) with %d ranks: %s\n", pi, fabs(pi - M_PI), size, ok ? "ok" : "WRONG");
    MPI_Finalize();
    return ok ? 0 : 1;
}
