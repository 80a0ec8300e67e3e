/*
 * heat.c: heat diffuses on a periodic size×size grid split by rows among
 * the ranks (blocks differ by at most one row), the classic stencil
 * program of MPI courses. Every step each rank exchanges its first and
 * last rows with its neighbours (MPI_Sendrecv into a one-row halo above
 * and below), applies the explicit update
 *     u' = u + alpha (north + south + west + east - 4u),
 * and an MPI_Allreduce of the largest change decides, the same on every
 * rank, whether to stop.
 *
 * The answer is checked twice: the update moves heat but never creates
 * or destroys it, so the total (an MPI_Allreduce of the sums) must stay
 * what it was; and rank 0 gathers the field (MPI_Gatherv) and compares it
 * with a sequential run of the same steps, which must agree exactly.
 * Exit status 1 if either check fails.
 *
 *   go run ./cmd/meshcc -o heat examples/c/heat.c && go run ./cmd/meshrun -n 4 ./heat
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#define SIZE 24
#define ALPHA 0.2
#define TOL 1e-3
#define MAXSTEPS 10000

static double initial(int i, int j)
{
    if (i >= SIZE / 4 && i < SIZE / 2 && j >= SIZE / 3 && j < SIZE / 3 + SIZE / 4 + 1)
        return 100;
    return 0;
}

/* the first row and the number of rows of block c of p */
static void split(int n, int p, int c, int *first, int *len)
{
    *len = n / p;
    *first = c * *len + (c < n % p ? c : n % p);
    if (c < n % p)
        (*len)++;
}

/* one explicit step over rows 1..rows of u (with halo rows 0 and rows+1),
 * periodic in j; returns the largest change */
static double step(const double *u, double *next, int rows)
{
    double change = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < SIZE; j++) {
            double c = u[i * SIZE + j];
            double w = u[i * SIZE + (j + SIZE - 1) % SIZE], e = u[i * SIZE + (j + 1) % SIZE];
            double n = u[(i - 1) * SIZE + j], s = u[(i + 1) * SIZE + j];
            double v = c + ALPHA * (n + s + w + e - 4 * c);
            next[i * SIZE + j] = v;
            if (fabs(v - c) > change)
                change = fabs(v - c);
        }
    return change;
}

/* the same steps on one grid, for the check */
static int sequential(double *grid)
{
    double *u = calloc((SIZE + 2) * SIZE, sizeof *u), *next = calloc((SIZE + 2) * SIZE, sizeof *u);
    for (int i = 0; i < SIZE; i++)
        for (int j = 0; j < SIZE; j++)
            u[(i + 1) * SIZE + j] = initial(i, j);
    int steps = 0;
    for (; steps < MAXSTEPS; steps++) {
        memcpy(u, u + SIZE * SIZE, SIZE * sizeof *u);
        memcpy(u + (SIZE + 1) * SIZE, u + SIZE, SIZE * sizeof *u);
        double change = step(u, next, SIZE);
        double *t = u; u = next; next = t;
        if (change < TOL) {
            steps++;
            break;
        }
    }
    memcpy(grid, u + SIZE, SIZE * SIZE * sizeof *u);
    free(u);
    free(next);
    return steps;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > SIZE) {
        if (rank == 0)
            fprintf(stderr, "heat: at most %d ranks\n", SIZE);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    int first, rows;
    split(SIZE, size, rank, &first, &rows);
    double *u = calloc((rows + 2) * SIZE, sizeof *u), *next = calloc((rows + 2) * SIZE, sizeof *u);
    double local = 0, total0, total;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < SIZE; j++) {
            u[(i + 1) * SIZE + j] = initial(first + i, j);
            local += u[(i + 1) * SIZE + j];
        }
    MPI_Allreduce(&local, &total0, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    int up = (rank + size - 1) % size, down = (rank + 1) % size, steps = 0;
    for (; steps < MAXSTEPS; steps++) {
        /* my first row goes up, the row below mine comes from down, and back */
        MPI_Sendrecv(u + SIZE, SIZE, MPI_DOUBLE, up, 0, u + (rows + 1) * SIZE, SIZE, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + rows * SIZE, SIZE, MPI_DOUBLE, down, 1, u, SIZE, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double change = step(u, next, rows), maxChange;
        double *t = u; u = next; next = t;
        MPI_Allreduce(&change, &maxChange, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (maxChange < TOL) {
            steps++;
            break;
        }
    }

    local = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < SIZE; j++)
            local += u[i * SIZE + j];
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    int *counts = NULL, *displs = NULL;
    double *field = NULL;
    if (rank == 0) {
        counts = malloc(size * sizeof *counts);
        displs = malloc(size * sizeof *displs);
        field = malloc(SIZE * SIZE * sizeof *field);
        for (int r = 0; r < size; r++) {
            int f, n;
            split(SIZE, size, r, &f, &n);
            counts[r] = n * SIZE;
            displs[r] = f * SIZE;
        }
    }
    MPI_Gatherv(u + SIZE, rows * SIZE, MPI_DOUBLE, field, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    int bad = fabs(total - total0) > 1e-9 * total0;
    if (rank == 0) {
        double *want = malloc(SIZE * SIZE * sizeof *want);
        int wantSteps = sequential(want);
        if (wantSteps != steps)
            bad = 1;
        for (int k = 0; k < SIZE * SIZE; k++)
            if (field[k] != want[k]) {
                bad = 1;
                break;
            }
        printf("heat on a %dx%d grid, %d ranks: %d steps, total %.6f (started %.6f), matches the sequential run: %s\n",
               SIZE, SIZE, size, steps, total, total0, bad ? "WRONG" : "ok");
        free(want);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(u);
    free(next);
    MPI_Finalize();
    return bad ? 1 : 0;
}
