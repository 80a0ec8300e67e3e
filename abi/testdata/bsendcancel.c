/* bsendcancel.c: MPI_Cancel of buffered sends (MPI_Ibsend, a started
 * MPI_Bsend_init) on two ranks: rank 0 sends, rank 1 receives. A send the
 * receiver has not matched is withdrawn (MPI_Test_cancelled true, the
 * receiver gets the next message, the attached buffer's space is back);
 * a matched one completes normally (false); MPI_Request_free of a
 * pending Ibsend still delivers it; an open handle's send gives its
 * space back once its data has left. Prints "bsendcancel ok" at rank 0. */
#include <mpi.h>
#include "check.h"

#define N 1000 /* ints per message: one message fills the attached buffer */

static int a[N], b[N], got[N];

static void fill(int *v, int base)
{
    for (int i = 0; i < N; i++)
        v[i] = base + i;
}

static void expect(const int *v, int base, const char *what)
{
    for (int i = 0; i < N; i++)
        CHECK(v[i] == base + i, "%s: element %d is %d, want %d", what, i, v[i], base + i);
}

static int cancelled(MPI_Status *st)
{
    int flag = -1;
    OK(MPI_Test_cancelled(st, &flag));
    return flag;
}

/* matched: rank 1 has received tag's message (its ack on tag+100) */
static void matched(int tag)
{
    int ack;
    OK(MPI_Recv(&ack, 1, MPI_INT, 1, tag + 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void receive(int tag, int base, const char *what)
{
    MPI_Status st;
    int n = -1;
    OK(MPI_Recv(got, N, MPI_INT, 0, tag, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == N, "%s: %d ints, want %d", what, n, N);
    expect(got, base, what);
}

static void ack(int tag)
{
    int one = 1;
    OK(MPI_Send(&one, 1, MPI_INT, 0, tag + 100, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;
    CHECK(size == 2, "run on 2 ranks, not %d", size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int bufsize = (int)sizeof a + MPI_BSEND_OVERHEAD;
    char *attached = malloc(bufsize);
    CHECK(attached != NULL, "malloc");
    OK(MPI_Buffer_attach(attached, bufsize));
    MPI_Request req;
    MPI_Status st;

    /* 1. Ibsend cancelled while unmatched: withdrawn, its space back for a
     * second Ibsend of the buffer's full size, which rank 1 receives */
    if (rank == 0) {
        fill(a, 1000);
        OK(MPI_Ibsend(a, N, MPI_INT, 1, 1, MPI_COMM_WORLD, &req));
        OK(MPI_Cancel(&req));
        int flag = 0;
        while (!flag)
            OK(MPI_Request_get_status(req, &flag, &st));
        CHECK(cancelled(&st), "Request_get_status: an unmatched Ibsend was not cancelled");
        OK(MPI_Wait(&req, &st));
        CHECK(req == MPI_REQUEST_NULL, "Wait frees the Ibsend request");
        CHECK(cancelled(&st), "an unmatched Ibsend was not cancelled");
        fill(b, 2000);
        OK(MPI_Ibsend(b, N, MPI_INT, 1, 1, MPI_COMM_WORLD, &req));
        OK(MPI_Wait(&req, &st)); /* local: the data is in the buffer */
        CHECK(!cancelled(&st), "an Ibsend not cancelled says cancelled");
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1)
        receive(1, 2000, "after a cancelled Ibsend");

    /* 2. Ibsend matched first: the cancel is too late */
    if (rank == 0) {
        fill(a, 3000);
        OK(MPI_Ibsend(a, N, MPI_INT, 1, 2, MPI_COMM_WORLD, &req));
        matched(2);
        OK(MPI_Cancel(&req));
        OK(MPI_Wait(&req, &st));
        CHECK(!cancelled(&st), "a matched Ibsend was cancelled");
    } else {
        receive(2, 3000, "a matched Ibsend");
        ack(2);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 3. persistent bsend, a start cancelled while unmatched (completed by
     * MPI_Test), the next start of the buffer's full size delivered */
    if (rank == 0) {
        OK(MPI_Bsend_init(a, N, MPI_INT, 1, 3, MPI_COMM_WORLD, &req));
        fill(a, 4000);
        OK(MPI_Start(&req));
        OK(MPI_Cancel(&req));
        int flag = 0;
        while (!flag)
            OK(MPI_Test(&req, &flag, &st));
        CHECK(req != MPI_REQUEST_NULL, "Test freed a persistent request");
        CHECK(cancelled(&st), "an unmatched persistent bsend was not cancelled");
        OK(MPI_Wait(&req, &st)); /* inactive: the empty status */
        CHECK(!cancelled(&st), "an inactive request's status says cancelled");
        fill(a, 5000);
        OK(MPI_Start(&req));
        OK(MPI_Wait(&req, &st));
        CHECK(!cancelled(&st), "a persistent bsend not cancelled says cancelled");
        /* 4. the same request, matched first */
        OK(MPI_Barrier(MPI_COMM_WORLD));
        fill(a, 6000);
        OK(MPI_Start(&req));
        matched(4);
        OK(MPI_Cancel(&req));
        OK(MPI_Wait(&req, &st));
        CHECK(!cancelled(&st), "a matched persistent bsend was cancelled");
        OK(MPI_Request_free(&req));
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        receive(3, 5000, "after a cancelled persistent bsend");
        receive(3, 6000, "a matched persistent bsend");
        ack(4);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 5. MPI_Request_free of a pending Ibsend: the message still leaves */
    if (rank == 0) {
        fill(a, 7000);
        OK(MPI_Ibsend(a, N, MPI_INT, 1, 5, MPI_COMM_WORLD, &req));
        OK(MPI_Request_free(&req));
        CHECK(req == MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1)
        receive(5, 7000, "a freed Ibsend");

    /* 6. two small Ibsends cancelled unmatched, completed by MPI_Waitall;
     * a third, not cancelled, completes at once in MPI_Waitany */
    if (rank == 0) {
        MPI_Request rs[2];
        MPI_Status ss[2];
        int x = 1, y = 2, z = 3, idx = -1;
        OK(MPI_Ibsend(&x, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &rs[0]));
        OK(MPI_Ibsend(&y, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &rs[1]));
        OK(MPI_Cancel(&rs[0]));
        OK(MPI_Cancel(&rs[1]));
        OK(MPI_Waitall(2, rs, ss));
        CHECK(cancelled(&ss[0]) && cancelled(&ss[1]), "Waitall: cancelled %d %d",
              cancelled(&ss[0]), cancelled(&ss[1]));
        OK(MPI_Ibsend(&z, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &rs[0]));
        OK(MPI_Waitany(1, rs, &idx, &st));
        CHECK(idx == 0 && !cancelled(&st), "Waitany: index %d", idx);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        int v = 0;
        OK(MPI_Recv(&v, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v == 3, "after two cancelled Ibsends got %d, want 3", v);
    }

    /* 7. an Ibsend whose handle is still open gives its space back once
     * its data has left (here: received): a second Ibsend of the buffer's
     * full size fits before the first handle completes */
    if (rank == 0) {
        MPI_Request r1, r2;
        fill(a, 8000);
        OK(MPI_Ibsend(a, N, MPI_INT, 1, 7, MPI_COMM_WORLD, &r1));
        matched(7);
        fill(b, 9000);
        OK(MPI_Ibsend(b, N, MPI_INT, 1, 8, MPI_COMM_WORLD, &r2));
        OK(MPI_Wait(&r1, &st));
        CHECK(!cancelled(&st), "a delivered Ibsend says cancelled");
        OK(MPI_Wait(&r2, &st));
    } else {
        receive(7, 8000, "an Ibsend whose handle is open");
        ack(7);
        receive(8, 9000, "an Ibsend into the space the first gave back");
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));

    void *back;
    int backsize;
    OK(MPI_Buffer_detach(&back, &backsize));
    CHECK(back == attached && backsize == bufsize, "detach gave %p %d", back, backsize);
    free(attached);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("bsendcancel ok\n");
    MPI_Finalize();
    return 0;
}
