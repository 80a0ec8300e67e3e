/* mpich3.c: the cases of issue 19's third round that MPICH's test suite
 * (test/mpi) found missing: generalized requests (pt2pt/greq1),
 * MPI_Bsend_init (pt2pt/bsend3), MPI_Buffer_iflush (pt2pt/bsend_iflush),
 * MPI_Intercomm_create_from_groups (comm/ic1) and MPI_Dims_create's
 * balanced factorization of large node counts (topo/dims5), and
 * MPI_Op_create functions on derived types (coll/allred_derived). Run on 1 to 4
 * ranks; prints "mpich3 ok" at rank 0. */
#include <mpi.h>
#include <string.h>
#include "check.h"

static int rank, size;

/* removed in MPI-3.0, not in the standard ABI's header; the library keeps
 * them (removed.c) for MPI-1 programs such as MPICH's coll/opsum */
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);

static void removed(void)
{
    MPI_Errhandler eh;
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Errhandler_get(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "MPI_Errhandler_get gave another handler");
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

/* the callbacks append a letter each to a log, in their order */
static char greq_log[16];

static void note(char c)
{
    size_t n = strlen(greq_log);
    greq_log[n] = c;
    greq_log[n + 1] = 0;
}

static int query_fn(void *extra, MPI_Status *st)
{
    note('q');
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 11;
    MPI_Status_set_cancelled(st, 0);
    MPI_Status_set_elements(st, MPI_INT, 5);
    return *(int *)extra; /* the query's error, if the test wants one */
}

static int free_fn(void *extra)
{
    (void)extra;
    note('f');
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    note(complete ? 'C' : 'c');
    return MPI_SUCCESS;
}

static void grequests(void)
{
    MPI_Request r, rs[2];
    MPI_Status st, sts[2];
    int flag, n, fail = 0, err, class;

    /* not complete before MPI_Grequest_complete; query then free at Wait */
    greq_log[0] = 0;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &fail, &r));
    OK(MPI_Test(&r, &flag, &st));
    CHECK(!flag, "complete before MPI_Grequest_complete");
    OK(MPI_Cancel(&r));
    OK(MPI_Grequest_complete(r));
    OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "the request is not MPI_REQUEST_NULL after Wait");
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 11 && n == 5, "status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, n);
    CHECK(strcmp(greq_log, "cqf") == 0, "callbacks %s, want cqf", greq_log);

    /* freed before it completes: free runs at MPI_Grequest_complete */
    greq_log[0] = 0;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &fail, &r));
    MPI_Request keep = r;
    OK(MPI_Request_free(&r));
    CHECK(greq_log[0] == 0, "callbacks %s before MPI_Grequest_complete", greq_log);
    OK(MPI_Grequest_complete(keep));
    CHECK(strcmp(greq_log, "f") == 0, "callbacks %s, want f", greq_log);

    /* Waitall over two; the query's error is in the status */
    greq_log[0] = 0;
    fail = MPI_ERR_OTHER;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &fail, &rs[0]));
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &fail, &rs[1]));
    OK(MPI_Grequest_complete(rs[1]));
    OK(MPI_Grequest_complete(rs[0]));
    err = MPI_Waitall(2, rs, sts);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_IN_STATUS, "Waitall gave class %d, want MPI_ERR_IN_STATUS", class);
    MPI_Error_class(sts[0].MPI_ERROR, &class);
    CHECK(class == MPI_ERR_OTHER, "status error class %d", class);
    CHECK(strcmp(greq_log, "qfqf") == 0, "callbacks %s, want qfqf", greq_log);

    /* completing twice, and a request that is not generalized */
    fail = 0;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &fail, &r));
    OK(MPI_Grequest_complete(r));
    err = MPI_Grequest_complete(r);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_REQUEST, "a second MPI_Grequest_complete gave class %d", class);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Irecv(&n, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    err = MPI_Grequest_complete(r);
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_REQUEST, "MPI_Grequest_complete of a receive gave class %d", class);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

/* MPI_Bsend_init: each start sends the buffer's contents at that start;
 * MPI_Buffer_iflush completes when the buffered sends have left */
static void bsend_init(void)
{
    static char buf[4 * (MPI_BSEND_OVERHEAD + 64)];
    int msg[4], got[4], i, k;
    MPI_Request r, f;
    void *b;
    int bsize;

    OK(MPI_Buffer_attach(buf, sizeof buf));
    OK(MPI_Bsend_init(msg, 4, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &r));
    for (k = 0; k < 3; k++) {
        for (i = 0; i < 4; i++)
            msg[i] = 100 * k + 10 * rank + i;
        OK(MPI_Start(&r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        msg[0] = -1; /* the message was copied at the start */
        OK(MPI_Recv(got, 4, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (i = 0; i < 4; i++)
            CHECK(got[i] == 100 * k + 10 * ((rank + size - 1) % size) + i, "round %d got[%d] = %d", k, i, got[i]);
    }
    /* a start of an active request fails, and sends nothing */
    OK(MPI_Start(&r));
    int serr = MPI_Startall(1, &r), sclass;
    MPI_Error_class(serr, &sclass);
    CHECK(sclass == MPI_ERR_REQUEST, "MPI_Startall of an active request gave class %d", sclass);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Recv(got, 4, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Startall(1, &r));
    OK(MPI_Buffer_iflush(&f));
    OK(MPI_Wait(&f, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Recv(got, 4, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Request_free(&r));
    /* a flush with nothing buffered completes too */
    OK(MPI_Buffer_iflush(&f));
    OK(MPI_Wait(&f, MPI_STATUS_IGNORE));
    OK(MPI_Buffer_detach(&b, &bsize));
    CHECK(b == buf && bsize == (int)sizeof buf, "detach gave %p %d", b, bsize);
    /* with no buffer, a start fails with MPI_ERR_BUFFER */
    OK(MPI_Bsend_init(msg, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &r));
    int err = MPI_Start(&r), class;
    MPI_Error_class(err, &class);
    CHECK(class == MPI_ERR_BUFFER, "a start without a buffer gave class %d", class);
    OK(MPI_Request_free(&r));
}

/* MPI_Intercomm_create_from_groups between the evens and the odds */
static void from_groups(void)
{
    MPI_Group world, evens, odds;
    MPI_Comm ic;
    int range[1][3], rsize, lrank, other;

    if (size < 2)
        return;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    range[0][0] = 0, range[0][1] = size - 1, range[0][2] = 2;
    OK(MPI_Group_range_incl(world, 1, range, &evens));
    OK(MPI_Group_difference(world, evens, &odds));
    if (rank % 2 == 0)
        OK(MPI_Intercomm_create_from_groups(evens, 0, odds, 0, "mpich3", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    else
        OK(MPI_Intercomm_create_from_groups(odds, 0, evens, 0, "mpich3", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    OK(MPI_Comm_remote_size(ic, &rsize));
    OK(MPI_Comm_rank(ic, &lrank));
    CHECK(rsize == (rank % 2 == 0 ? size / 2 : (size + 1) / 2), "remote size %d", rsize);
    CHECK(lrank == rank / 2, "rank %d in the intercommunicator", lrank);
    if (lrank == 0) {
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 5, &other, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE));
        CHECK(other == 1 - rank, "leader %d heard from %d", rank, other);
    }
    OK(MPI_Comm_free(&ic));
    OK(MPI_Group_free(&evens));
    OK(MPI_Group_free(&odds));
    OK(MPI_Group_free(&world));
}

/* MPI_Dims_create on topo/dims5's hardest cases: large node counts in
 * many dimensions, and MPICH's choice among equally spread answers */
static void dims(void)
{
    static const struct {
        int n, k, want[10];
    } cases[] = {
        {122472, 10, {7, 4, 3, 3, 3, 3, 3, 3, 3, 2}},
        {196800, 3, {82, 50, 48}},
        {815625, 2, {1125, 725}},
        {416304, 5, {59, 14, 9, 8, 7}},
    };
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int d[10] = {0};
        OK(MPI_Dims_create(cases[c].n, cases[c].k, d));
        for (int i = 0; i < cases[c].k; i++)
            CHECK(d[i] == cases[c].want[i], "%d in %d dims: dims[%d] = %d, want %d", cases[c].n,
                  cases[c].k, i, d[i], cases[c].want[i]);
    }
}

/* an MPI_Op_create function on a vector type of n ints (coll/
 * allred_derived): it gets whole elements of the type, whatever the
 * reduction's algorithm */
static int vec_n;

static void vec_sum(void *in, void *inout, int *count, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *count * vec_n; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void user_op_vector(void)
{
    enum { count = 10 };
    static int buf[count * 1024], out[count * 1024];
    MPI_Op op;
    MPI_Datatype vec;

    OK(MPI_Op_create(vec_sum, 1, &op));
    for (vec_n = 1; vec_n <= 1024; vec_n *= 4) {
        OK(MPI_Type_vector(vec_n, 1, 1, MPI_INT, &vec));
        OK(MPI_Type_commit(&vec));
        for (int i = 0; i < count * vec_n; i++)
            buf[i] = rank + i;
        OK(MPI_Allreduce(buf, out, count, vec, op, MPI_COMM_WORLD));
        for (int i = 0; i < count * vec_n; i++)
            CHECK(out[i] == size * (size - 1) / 2 + i * size, "allreduce n=%d: out[%d] = %d", vec_n, i, out[i]);
        memset(out, 0, sizeof out);
        OK(MPI_Reduce(buf, out, count, vec, op, size - 1, MPI_COMM_WORLD));
        for (int i = 0; rank == size - 1 && i < count * vec_n; i++)
            CHECK(out[i] == size * (size - 1) / 2 + i * size, "reduce n=%d: out[%d] = %d", vec_n, i, out[i]);
        OK(MPI_Type_free(&vec));
    }
    OK(MPI_Op_free(&op));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    grequests();
    bsend_init();
    from_groups();
    dims();
    user_op_vector();
    removed();
    OK(MPI_Finalize());
    if (rank == 0)
        printf("mpich3 ok\n");
    return 0;
}
