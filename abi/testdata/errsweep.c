/* errsweep.c: bad arguments through the real crossing, table-driven:
 * every bad handle of each kind (the null handle, a handle of another
 * kind, a random value, a freed handle, an uncommitted datatype) into
 * the calls of each family that take one, negative counts, ranks, roots
 * and tags out of range, MPI_IN_PLACE and NULL buffers where they are
 * not allowed, freed and inactive requests, and an intercommunicator
 * where an intracommunicator is needed (and the converse). Each call must
 * return its MPI-4.1 class under MPI_ERRORS_RETURN, the process must
 * live, and afterwards a Send/Recv and an Allreduce must work. Prints
 * "errsweep ok" at rank 0 with the number of cases. */
#include <stdint.h>
#include <string.h>
#include <mpi.h>
#include "check.h"

static int cases;

#define EXPECT(cls, call)                                                         \
    do {                                                                          \
        int err_ = (call), class_ = -1, len_ = 0;                                 \
        char msg_[MPI_MAX_ERROR_STRING] = "";                                     \
        cases++;                                                                  \
        if (err_ != MPI_SUCCESS) {                                                \
            OK(MPI_Error_class(err_, &class_));                                   \
            OK(MPI_Error_string(err_, msg_, &len_));                              \
        } else {                                                                  \
            class_ = MPI_SUCCESS;                                                 \
        }                                                                         \
        CHECK(class_ == (cls), "%s [%s]: class %d, want %d (%s)", #call, what, \
              class_, cls, msg_);                                                 \
    } while (0)

#define RANDOM ((void *)(uintptr_t)0x7fff1234)

int main(int argc, char **argv)
{
    int rank, size, x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8], flag, n;
    MPI_Status st;
    MPI_Request req;
    MPI_Message msg;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* bad communicators */
    MPI_Comm freed;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &freed));
    OK(MPI_Comm_free(&freed));
    MPI_Comm badc[4];
    const char *badcName[4] = {"MPI_COMM_NULL", "a datatype", "random", "freed"};
    badc[0] = MPI_COMM_NULL, badc[1] = (MPI_Comm)(void *)MPI_INT, badc[2] = (MPI_Comm)RANDOM, badc[3] = freed;
    for (int i = 0; i < 4; i++) {
        MPI_Comm c = badc[i], nc;
        MPI_Group g;
        const char *what = badcName[i];
        EXPECT(MPI_ERR_COMM, MPI_Send(x, 1, MPI_INT, 0, 0, c));
        EXPECT(MPI_ERR_COMM, MPI_Recv(x, 1, MPI_INT, 0, 0, c, &st));
        EXPECT(MPI_ERR_COMM, MPI_Isend(x, 1, MPI_INT, 0, 0, c, &req));
        EXPECT(MPI_ERR_COMM, MPI_Irecv(x, 1, MPI_INT, 0, 0, c, &req));
        EXPECT(MPI_ERR_COMM, MPI_Send_init(x, 1, MPI_INT, 0, 0, c, &req));
        EXPECT(MPI_ERR_COMM, MPI_Bsend_init(x, 1, MPI_INT, 0, 0, c, &req));
        EXPECT(MPI_ERR_COMM, MPI_Iprobe(0, 0, c, &flag, &st));
        EXPECT(MPI_ERR_COMM, MPI_Improbe(0, 0, c, &flag, &msg, &st));
        EXPECT(MPI_ERR_COMM, MPI_Barrier(c));
        EXPECT(MPI_ERR_COMM, MPI_Bcast(x, 1, MPI_INT, 0, c));
        EXPECT(MPI_ERR_COMM, MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, c));
        EXPECT(MPI_ERR_COMM, MPI_Iallreduce(x, y, 1, MPI_INT, MPI_SUM, c, &req));
        EXPECT(MPI_ERR_COMM, MPI_Allreduce_init(x, y, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &req));
        EXPECT(MPI_ERR_COMM, MPI_Comm_size(c, &n));
        EXPECT(MPI_ERR_COMM, MPI_Comm_dup(c, &nc));
        EXPECT(MPI_ERR_COMM, MPI_Comm_split(c, 0, 0, &nc));
        EXPECT(MPI_ERR_COMM, MPI_Comm_group(c, &g));
        EXPECT(MPI_ERR_COMM, MPI_Pack(x, 1, MPI_INT, y, 32, &n, c));
        EXPECT(MPI_ERR_COMM, MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    }
    {
        const char *what = "predefined or null communicators freed";
        MPI_Comm c = MPI_COMM_WORLD;
        EXPECT(MPI_ERR_COMM, MPI_Comm_free(&c));
        c = MPI_COMM_SELF;
        EXPECT(MPI_ERR_COMM, MPI_Comm_free(&c));
        c = MPI_COMM_NULL;
        EXPECT(MPI_ERR_COMM, MPI_Comm_free(&c));
    }

    /* bad datatypes */
    /* a freed handle is freed until the next handle of its kind is made,
     * which may reuse it: each is made last */
    MPI_Datatype freedT, uncommitted;
    OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    OK(MPI_Type_contiguous(2, MPI_INT, &freedT));
    OK(MPI_Type_commit(&freedT));
    OK(MPI_Type_free(&freedT));
    MPI_Datatype badt[5];
    const char *badtName[5] = {"MPI_DATATYPE_NULL", "a communicator", "random", "freed", "uncommitted"};
    badt[0] = MPI_DATATYPE_NULL, badt[1] = (MPI_Datatype)(void *)MPI_COMM_WORLD, badt[2] = (MPI_Datatype)RANDOM;
    badt[3] = freedT, badt[4] = uncommitted;
    for (int i = 0; i < 5; i++) {
        MPI_Datatype t = badt[i], nt;
        const char *what = badtName[i];
        EXPECT(MPI_ERR_TYPE, MPI_Send(x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_TYPE, MPI_Recv(x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
        EXPECT(MPI_ERR_TYPE, MPI_Isend(x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
        EXPECT(MPI_ERR_TYPE, MPI_Bsend_init(x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
        EXPECT(MPI_ERR_TYPE, MPI_Sendrecv(x, 1, t, MPI_PROC_NULL, 0, y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
        EXPECT(MPI_ERR_TYPE, MPI_Bcast(x, 1, t, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_TYPE, MPI_Allreduce(x, y, 1, t, MPI_SUM, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_TYPE, MPI_Gather(x, 1, t, y, 1, MPI_INT, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_TYPE, MPI_Pack(x, 1, t, y, 32, &n, MPI_COMM_WORLD));
        if (i < 4) {
            EXPECT(MPI_ERR_TYPE, MPI_Type_size(t, &n));
            EXPECT(MPI_ERR_TYPE, MPI_Type_contiguous(2, t, &nt));
        }
    }
    OK(MPI_Type_free(&uncommitted));

    /* bad requests, and requests in the wrong state */
    {
        const char *what = "requests";
        MPI_Request fr, inactive, r;
        OK(MPI_Send_init(x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &inactive));
        OK(MPI_Isend(x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &fr));
        MPI_Request freedR = fr;
        OK(MPI_Wait(&fr, &st));
        MPI_Request badr[3] = {freedR, (MPI_Request)RANDOM, (MPI_Request)(void *)MPI_COMM_WORLD};
        for (int i = 0; i < 3; i++) {
            r = badr[i];
            EXPECT(MPI_ERR_REQUEST, MPI_Wait(&r, &st));
            r = badr[i];
            EXPECT(MPI_ERR_REQUEST, MPI_Test(&r, &flag, &st));
            r = badr[i];
            EXPECT(MPI_ERR_REQUEST, MPI_Start(&r));
            r = badr[i];
            EXPECT(MPI_ERR_REQUEST, MPI_Request_free(&r));
            r = badr[i];
            EXPECT(MPI_ERR_REQUEST, MPI_Cancel(&r));
        }
        r = MPI_REQUEST_NULL;
        EXPECT(MPI_SUCCESS, MPI_Wait(&r, &st));
        EXPECT(MPI_SUCCESS, MPI_Test(&r, &flag, &st));
        EXPECT(MPI_ERR_REQUEST, MPI_Start(&r));
        EXPECT(MPI_ERR_REQUEST, MPI_Request_free(&r));
        /* an inactive persistent request completes at once */
        EXPECT(MPI_SUCCESS, MPI_Wait(&inactive, &st));
        CHECK(inactive != MPI_REQUEST_NULL, "Wait freed an inactive persistent request");
        OK(MPI_Start(&inactive));
        EXPECT(MPI_ERR_REQUEST, MPI_Start(&inactive)); /* active already */
        OK(MPI_Wait(&inactive, &st));
        OK(MPI_Request_free(&inactive));
    }

    /* counts, ranks, roots, tags, buffers, ops */
    {
        const char *what = "values";
        EXPECT(MPI_ERR_COUNT, MPI_Send(x, -1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_COUNT, MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_COUNT, MPI_Bsend_init(x, -1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
        EXPECT(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_RANK, MPI_Bsend_init(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &req));
        EXPECT(MPI_ERR_ROOT, MPI_Bcast(x, 1, MPI_INT, size, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_ROOT, MPI_Bcast(x, 1, MPI_INT, MPI_PROC_NULL, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_ROOT, MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, -9, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_TAG, MPI_Send(x, 1, MPI_INT, MPI_PROC_NULL, -5, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_TAG, MPI_Bsend_init(x, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
        EXPECT(MPI_ERR_TAG, MPI_Mprobe(MPI_PROC_NULL, -5, MPI_COMM_WORLD, &msg, &st));
        EXPECT(MPI_ERR_BUFFER, MPI_Send(MPI_IN_PLACE, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_BUFFER, MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_BUFFER, MPI_Bcast(NULL, 1, MPI_INT, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_BUFFER, MPI_Allreduce(x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_BUFFER, MPI_Allreduce(NULL, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM));
        EXPECT(MPI_ERR_BUFFER, MPI_Pack(MPI_IN_PLACE, 1, MPI_INT, y, 32, &n, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, (MPI_Op)RANDOM, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_INFO, MPI_Allreduce_init(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, (MPI_Info)RANDOM, &req));
        EXPECT(MPI_ERR_INFO, MPI_Comm_dup_with_info(MPI_COMM_WORLD, (MPI_Info)RANDOM, &freed));
        EXPECT(MPI_ERR_BASE, MPI_Free_mem(x));
        /* legal: zero counts with NULL buffers */
        EXPECT(MPI_SUCCESS, MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
        EXPECT(MPI_SUCCESS, MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT(MPI_SUCCESS, MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
    }

    /* an intercommunicator where an intracommunicator is needed, and the
     * converse: even and odd ranks */
    if (size >= 2) {
        const char *what = "intercommunicator";
        MPI_Comm half, inter, nc;
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 9, &inter));
        OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
        int dims[1] = {0}, periods[1] = {0};
        EXPECT(MPI_ERR_COMM, MPI_Scan(x, y, 1, MPI_INT, MPI_SUM, inter));
        EXPECT(MPI_ERR_COMM, MPI_Exscan(x, y, 1, MPI_INT, MPI_SUM, inter));
        EXPECT(MPI_ERR_COMM, MPI_Cart_create(inter, 1, dims, periods, 0, &nc));
        EXPECT(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_WORLD, &n));
        EXPECT(MPI_ERR_COMM, MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &nc));
        EXPECT(MPI_ERR_BUFFER, MPI_Allreduce(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, inter));
        EXPECT(MPI_ERR_ROOT, MPI_Bcast(x, 1, MPI_INT, 5, inter));
        OK(MPI_Comm_free(&inter));
        OK(MPI_Comm_free(&half));
    }

    /* the library still works */
    {
        int v = rank + 1, sum = 0, got = -1;
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        OK(MPI_Sendrecv(&v, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &st));
        CHECK(got == left + 1, "sendrecv after the sweep: %d", got);
        OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == size * (size + 1) / 2, "allreduce after the sweep: %d", sum);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        printf("errsweep ok (%d cases)\n", cases);
    }
    MPI_Finalize();
    return 0;
}
