/* fatal.c: under the default MPI_ERRORS_ARE_FATAL an invalid rank ends the
 * job; nothing after the call runs. */
#include <stdio.h>
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, x = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("before the error\n");
    if (rank == 0)
        MPI_Send(&x, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("after the error\n");
    MPI_Finalize();
    return 0;
}
