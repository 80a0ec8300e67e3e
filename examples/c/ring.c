/*
 * ring.c: a token goes round the ring of ranks several times; each rank
 * adds its rank to it as it passes. Rank 0 starts each lap and checks the
 * sum when the token comes back; the other ranks forward it with
 * MPI_Recv and MPI_Send. A last lap uses MPI_Sendrecv in both directions
 * at once. Exit status 1 if a sum is wrong.
 *
 *   go run ./cmd/meshcc -o ring examples/c/ring.c && go run ./cmd/meshrun -n 4 ./ring
 */
#include <stdio.h>
#include <mpi.h>

int main(int argc, char **argv)
{
    const int laps = 10, tag = 7;
    int rank, size, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long want = (long)size * (size - 1) / 2;

    for (int lap = 0; lap < laps; lap++) {
        long token;
        MPI_Status st;
        if (rank == 0) {
            token = 0;
            if (size > 1) {
                MPI_Send(&token, 1, MPI_LONG, next, tag, MPI_COMM_WORLD);
                MPI_Recv(&token, 1, MPI_LONG, prev, tag, MPI_COMM_WORLD, &st);
                int n;
                MPI_Get_count(&st, MPI_LONG, &n);
                if (st.MPI_SOURCE != prev || st.MPI_TAG != tag || n != 1)
                    bad = 1;
            }
            if (token != want) {
                fprintf(stderr, "ring: lap %d: token %ld, want %ld\n", lap, token, want);
                bad = 1;
            }
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, tag, MPI_COMM_WORLD, &st);
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, next, tag, MPI_COMM_WORLD);
        }
    }

    /* both ways at once: each rank gets its neighbours' ranks */
    int fromPrev = -1, fromNext = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 1, &fromPrev, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&rank, 1, MPI_INT, prev, 2, &fromNext, 1, MPI_INT, next, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (fromPrev != prev || fromNext != next) {
        fprintf(stderr, "ring: rank %d heard %d and %d, want %d and %d\n", rank, fromPrev, fromNext, prev, next);
        bad = 1;
    }

    int anyBad;
    MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ring of %d ranks, %d laps: %s\n", size, laps, anyBad ? "WRONG" : "ok");
    MPI_Finalize();
    return anyBad ? 1 : 0;
}
