/* errors.c: edge arguments under MPI_ERRORS_RETURN: each call must fail
 * with the right error class, and MPI_Error_string must name the call.
 * Prints "errors ok" at rank 0. */
#include <string.h>
#include <mpi.h>
#include "check.h"

/* EXPECT: the call returns an error code of class cls whose string names it */
#define EXPECT(cls, name, call)                                                         \
    do {                                                                                \
        int err_ = (call), class_ = -1, len_ = 0;                                       \
        char msg_[MPI_MAX_ERROR_STRING];                                                \
        CHECK(err_ != MPI_SUCCESS, "%s succeeded", #call);                              \
        OK(MPI_Error_class(err_, &class_));                                             \
        OK(MPI_Error_string(err_, msg_, &len_));                                        \
        CHECK(class_ == (cls), "%s: class %d, want %d (%s)", #call, class_, cls, msg_); \
        CHECK(strstr(msg_, name) != NULL && (int)strlen(msg_) == len_,                  \
              "%s: message %s does not name %s", #call, msg_, name);                    \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size, x = 1, n;
    MPI_Status st;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "the default error handler");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "set errhandler");
    OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler_free");
    double *mem;
    OK(MPI_Alloc_mem(100 * sizeof(double), MPI_INFO_NULL, &mem));
    mem[99] = 1;
    OK(MPI_Free_mem(mem));

    /* ranks */
    EXPECT(MPI_ERR_RANK, "MPI_Send", MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, "MPI_Send", MPI_Send(&x, 1, MPI_INT, -2, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, "MPI_Send", MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, "MPI_Recv", MPI_Recv(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_RANK, "MPI_Isend", MPI_Isend(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &req));
    CHECK(req == MPI_REQUEST_NULL, "a failed Isend leaves the request alone");
    /* counts, tags, buffers, types, ops */
    EXPECT(MPI_ERR_COUNT, "MPI_Send", MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COUNT, "MPI_Bcast", MPI_Bcast(&x, -3, MPI_INT, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TAG, "MPI_Send", MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TAG, "MPI_Send", MPI_Send(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, "MPI_Send", MPI_Send(NULL, 2, MPI_INT, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, "MPI_Recv", MPI_Recv(MPI_IN_PLACE, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_TYPE, "MPI_Send", MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, "MPI_Allreduce", MPI_Allreduce(&x, &n, 1, (MPI_Datatype)0x7777, MPI_SUM, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, "MPI_Allreduce", MPI_Allreduce(&x, &n, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_ROOT, "MPI_Bcast", MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_ROOT, "MPI_Ireduce", MPI_Ireduce(&x, &n, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD, &req));
    /* communicators */
    EXPECT(MPI_ERR_COMM, "MPI_Comm_rank", MPI_Comm_rank(MPI_COMM_NULL, &n));
    EXPECT(MPI_ERR_COMM, "MPI_Send", MPI_Send(&x, 1, MPI_INT, 0, 0, (MPI_Comm)0x5555));
    {
        /* a range that names more ranks than the group has: an error, not a
           billion-rank expansion */
        MPI_Group wg, ng;
        int huge[1][3] = {{0, 1 << 30, 1}};
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        EXPECT(MPI_ERR_ARG, "MPI_Group_range_incl", MPI_Group_range_incl(wg, 1, huge, &ng));
        EXPECT(MPI_ERR_ARG, "MPI_Group_range_excl", MPI_Group_range_excl(wg, 1, huge, &ng));
        MPI_Group_free(&wg);
    }
    MPI_Comm world = MPI_COMM_WORLD;
    EXPECT(MPI_ERR_COMM, "MPI_Comm_free", MPI_Comm_free(&world));
    /* requests */
    req = MPI_REQUEST_NULL;
    OK(MPI_Wait(&req, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && n == 0, "wait on MPI_REQUEST_NULL");
    int flag = 0;
    OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "test on MPI_REQUEST_NULL");
    EXPECT(MPI_ERR_REQUEST, "MPI_Request_free", MPI_Request_free(&req));
    EXPECT(MPI_ERR_REQUEST, "MPI_Start", MPI_Start(&req));
    MPI_Request bogus = (MPI_Request)0x4242;
    EXPECT(MPI_ERR_REQUEST, "MPI_Wait", MPI_Wait(&bogus, MPI_STATUS_IGNORE));
    /* a collective request cannot be cancelled */
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_REQUEST, "MPI_Cancel", MPI_Cancel(&req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* truncation: a message longer than the buffer */
    int two[2] = {1, 2}, one = 0;
    OK(MPI_Isend(two, 2, MPI_INT, rank, 3, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_TRUNCATE, "MPI_Recv", MPI_Recv(&one, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &st));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* an error code that does not exist */
    int cls;
    EXPECT(MPI_ERR_ARG, "MPI_Error_class", MPI_Error_class(12345, &cls));
    OK(MPI_Error_class(MPI_ERR_TRUNCATE, &cls));
    CHECK(cls == MPI_ERR_TRUNCATE, "a class is its own class");
    /* calls that meshmpi does not implement yet: unsupported, naming the call */
    EXPECT(MPI_ERR_OP, "MPI_Op_free", MPI_Op_free(&(MPI_Op){MPI_SUM}));
    MPI_Win win;
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_create", MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Datatype vec;
    EXPECT(MPI_ERR_ARG, "MPI_Type_create_f90_integer", MPI_Type_create_f90_integer(99, &vec));
    EXPECT(MPI_ERR_BUFFER, "MPI_Bsend", MPI_Bsend(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD)); /* no buffer attached */
    EXPECT(MPI_ERR_BUFFER, "MPI_Ibsend", MPI_Ibsend(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &req)); /* no buffer attached either */
    MPI_Comm child;
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Comm_spawn", MPI_Comm_spawn("x", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child, MPI_ERRCODES_IGNORE));
    /* a neighborhood collective needs a topology */
    EXPECT(MPI_ERR_TOPOLOGY, "MPI_Neighbor_allgather",
           MPI_Neighbor_allgather(&x, 1, MPI_INT, &n, 1, MPI_INT, MPI_COMM_WORLD));
    int dims[2] = {0, 3};
    EXPECT(MPI_ERR_TOPOLOGY, "MPI_Cart_shift", MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &dims[0], &dims[1]));
    /* the communicator is still fine */
    OK(MPI_Allreduce(&x, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(n == size, "allreduce after the errors: %d", n);
    OK(MPI_Finalize());
    if (rank == 0)
        printf("errors ok on %d ranks\n", size);
    return 0;
}
