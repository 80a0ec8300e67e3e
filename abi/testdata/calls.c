/* calls.c: point-to-point, requests, collectives (blocking, nonblocking,
 * persistent, in place) and communicators through the C binding, checked
 * on every rank against closed forms. Prints "calls ok" at rank 0. */
#include <string.h>
#include <mpi.h>
#include "check.h"

static int rank, size;

static void p2p(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Status st;
    int n;

    /* nonblocking ring, both ways, completed by Waitall */
    int out[2] = {rank, -rank}, in[2] = {-1, -1};
    MPI_Request rs[4];
    OK(MPI_Irecv(&in[0], 1, MPI_INT, prev, 10, MPI_COMM_WORLD, &rs[0]));
    OK(MPI_Irecv(&in[1], 1, MPI_INT, next, 11, MPI_COMM_WORLD, &rs[1]));
    OK(MPI_Isend(&out[0], 1, MPI_INT, next, 10, MPI_COMM_WORLD, &rs[2]));
    OK(MPI_Issend(&out[1], 1, MPI_INT, prev, 11, MPI_COMM_WORLD, &rs[3]));
    MPI_Status sts[4];
    OK(MPI_Waitall(4, rs, sts));
    for (int i = 0; i < 4; i++)
        CHECK(rs[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    CHECK(in[0] == prev && in[1] == -next, "ring got %d %d", in[0], in[1]);
    CHECK(sts[0].MPI_SOURCE == prev && sts[0].MPI_TAG == 10, "status %d %d", sts[0].MPI_SOURCE, sts[0].MPI_TAG);

    /* probe, then receive what it found, with a wildcard */
    double d[5] = {1, 2, 3, 4, 5}, r[8];
    OK(MPI_Isend(d, 5, MPI_DOUBLE, next, 12, MPI_COMM_WORLD, &rs[0]));
    OK(MPI_Probe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(n == 5 && st.MPI_SOURCE == prev, "probe count %d source %d", n, st.MPI_SOURCE);
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 10, "5 doubles are %d ints", n);
    OK(MPI_Recv(r, 8, MPI_DOUBLE, st.MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(n == 5 && r[4] == 5 && st.MPI_TAG == 12, "recv count %d tag %d", n, st.MPI_TAG);
    OK(MPI_Wait(&rs[0], MPI_STATUS_IGNORE));
    int flag = 1;
    OK(MPI_Iprobe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "nothing left to probe");

    /* Waitany, Waitsome, Testany, Testall */
    int a = -1, b = -1, v = rank;
    OK(MPI_Irecv(&a, 1, MPI_INT, prev, 13, MPI_COMM_WORLD, &rs[0]));
    OK(MPI_Irecv(&b, 1, MPI_INT, prev, 14, MPI_COMM_WORLD, &rs[1]));
    OK(MPI_Send(&v, 1, MPI_INT, next, 14, MPI_COMM_WORLD));
    OK(MPI_Send(&v, 1, MPI_INT, next, 13, MPI_COMM_WORLD));
    int idx;
    OK(MPI_Waitany(2, rs, &idx, &st));
    CHECK((idx == 0 || idx == 1) && rs[idx] == MPI_REQUEST_NULL && st.MPI_TAG == 13 + idx, "waitany %d tag %d", idx, st.MPI_TAG);
    int outcount, indices[2];
    OK(MPI_Waitsome(2, rs, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 1 - idx && sts[0].MPI_TAG == 14 - idx, "waitsome %d", outcount);
    CHECK(a == prev && b == prev, "waitany and waitsome got %d %d", a, b);
    OK(MPI_Waitsome(2, rs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "waitsome on null requests: %d", outcount);
    OK(MPI_Waitany(2, rs, &idx, &st));
    CHECK(idx == MPI_UNDEFINED && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "waitany on null requests");
    OK(MPI_Testall(2, rs, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "testall on null requests");
    OK(MPI_Irecv(&a, 1, MPI_INT, prev, 15, MPI_COMM_WORLD, &rs[0]));
    OK(MPI_Testany(1, rs, &idx, &flag, &st));
    CHECK(!flag, "testany before the send");
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* no rank sends before every rank tested */
    OK(MPI_Send(&v, 1, MPI_INT, next, 15, MPI_COMM_WORLD));
    do
        OK(MPI_Test(&rs[0], &flag, &st));
    while (!flag);
    CHECK(rs[0] == MPI_REQUEST_NULL && st.MPI_SOURCE == prev, "test");

    /* buffered sends, and the get_status calls that free nothing */
    static char bbuf[4 * MPI_BSEND_OVERHEAD];
    int bv[3] = {rank, rank + 1, rank + 2}, br[3];
    OK(MPI_Buffer_attach(bbuf, sizeof bbuf));
    OK(MPI_Bsend(bv, 3, MPI_INT, next, 21, MPI_COMM_WORLD));
    bv[0] = -1; /* the buffer is free again at once */
    OK(MPI_Irecv(br, 3, MPI_INT, prev, 21, MPI_COMM_WORLD, &rs[0]));
    do
        OK(MPI_Request_get_status(rs[0], &flag, &st));
    while (!flag);
    CHECK(rs[0] != MPI_REQUEST_NULL && st.MPI_SOURCE == prev, "get_status frees nothing");
    OK(MPI_Request_get_status_all(1, rs, &flag, sts));
    CHECK(flag && sts[0].MPI_TAG == 21, "get_status_all");
    OK(MPI_Wait(&rs[0], &st));
    CHECK(br[0] == prev && br[2] == prev + 2 && st.MPI_TAG == 21, "bsend got %d", br[0]);
    void *detached;
    int dsize;
    OK(MPI_Buffer_detach(&detached, &dsize));
    CHECK(detached == bbuf && dsize == (int)sizeof bbuf, "detach");

    /* the status accessors */
    MPI_Status made;
    OK(MPI_Status_set_source(&made, 3));
    OK(MPI_Status_set_tag(&made, 4));
    OK(MPI_Status_set_error(&made, MPI_ERR_TAG));
    OK(MPI_Status_set_elements(&made, MPI_DOUBLE, 5));
    OK(MPI_Status_set_cancelled(&made, 0));
    int got;
    OK(MPI_Status_get_source(&made, &got));
    CHECK(got == 3 && made.MPI_TAG == 4 && made.MPI_ERROR == MPI_ERR_TAG, "status setters");
    OK(MPI_Get_count(&made, MPI_INT, &got));
    CHECK(got == 10, "5 doubles set are %d ints", got);
    OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &got));
    CHECK(!got, "world is no intercommunicator");

    /* cancel a receive that never matches */
    OK(MPI_Irecv(&a, 1, MPI_INT, prev, 99, MPI_COMM_WORLD, &rs[0]));
    OK(MPI_Cancel(&rs[0]));
    OK(MPI_Wait(&rs[0], &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "the receive was not cancelled");

    /* persistent send and receive, started three times */
    int ps = 0, pr = -1;
    OK(MPI_Recv_init(&pr, 1, MPI_INT, prev, 16, MPI_COMM_WORLD, &rs[0]));
    OK(MPI_Send_init(&ps, 1, MPI_INT, next, 16, MPI_COMM_WORLD, &rs[1]));
    for (int k = 0; k < 3; k++) {
        ps = rank * 10 + k;
        OK(MPI_Startall(2, rs));
        OK(MPI_Waitall(2, rs, MPI_STATUSES_IGNORE));
        CHECK(pr == prev * 10 + k, "persistent round %d got %d", k, pr);
        CHECK(rs[0] != MPI_REQUEST_NULL, "a persistent request stays");
    }
    OK(MPI_Request_free(&rs[0]));
    OK(MPI_Request_free(&rs[1]));
    CHECK(rs[0] == MPI_REQUEST_NULL, "freed");

    /* MPI_PROC_NULL: completes at once, the empty status */
    OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Recv(&a, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
          "proc null status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, n);

    /* Sendrecv with different datatypes on the two sides, and a large message */
    static char big[1 << 20], bigin[1 << 20];
    for (int i = 0; i < (int)sizeof big; i++)
        big[i] = (char)(i * 7 + rank);
    OK(MPI_Sendrecv(big, sizeof big, MPI_BYTE, next, 17, bigin, sizeof bigin, MPI_CHAR, prev, 17, MPI_COMM_WORLD, &st));
    for (int i = 0; i < (int)sizeof big; i += 4097)
        CHECK(bigin[i] == (char)(i * 7 + prev), "big message byte %d", i);
    /* sendrecv_replace round the ring */
    int token = rank;
    OK(MPI_Sendrecv_replace(&token, 1, MPI_INT, next, 18, prev, 18, MPI_COMM_WORLD, &st));
    CHECK(token == prev && st.MPI_SOURCE == prev, "sendrecv_replace %d", token);
    /* matched probes and ready sends */
    MPI_Message msg;
    int mv = -1;
    OK(MPI_Irsend(&v, 1, MPI_INT, next, 19, MPI_COMM_WORLD, &rs[0]));
    OK(MPI_Mprobe(prev, 19, MPI_COMM_WORLD, &msg, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 1 && msg != MPI_MESSAGE_NULL, "mprobe");
    OK(MPI_Mrecv(&mv, 1, MPI_INT, &msg, &st));
    CHECK(mv == prev && msg == MPI_MESSAGE_NULL && st.MPI_TAG == 19, "mrecv %d", mv);
    OK(MPI_Wait(&rs[0], MPI_STATUS_IGNORE));
    OK(MPI_Rsend(&v, 1, MPI_INT, next, 20, MPI_COMM_WORLD));
    do
        OK(MPI_Improbe(prev, 20, MPI_COMM_WORLD, &flag, &msg, &st));
    while (!flag);
    OK(MPI_Imrecv(&mv, 1, MPI_INT, &msg, &rs[0]));
    OK(MPI_Wait(&rs[0], &st));
    CHECK(mv == prev && st.MPI_SOURCE == prev, "imrecv %d", mv);
    OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "mprobe of MPI_PROC_NULL");
    OK(MPI_Mrecv(&mv, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL, "mrecv of MPI_MESSAGE_NO_PROC");
    long long ll = rank;
    OK(MPI_Ssend(&ll, 1, MPI_LONG_LONG, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
}

/* a commutative user operation: a sum */
static void mysum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    CHECK(*dt == MPI_DOUBLE, "datatype handed to the user function");
    for (int i = 0; i < *len; i++)
        ((double *)inout)[i] += ((double *)in)[i];
}

/* a non-commutative one: keep the lower rank's value */
static void first(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, *len * sizeof(int));
}

static void userops(void)
{
    MPI_Op sum, keep;
    int commute;
    OK(MPI_Op_create(mysum, 1, &sum));
    OK(MPI_Op_create(first, 0, &keep));
    OK(MPI_Op_commutative(keep, &commute));
    CHECK(!commute, "op_commutative");
    double v[100], s[100];
    for (int i = 0; i < 100; i++)
        v[i] = rank * i;
    OK(MPI_Allreduce(v, s, 100, MPI_DOUBLE, sum, MPI_COMM_WORLD));
    for (int i = 0; i < 100; i++)
        CHECK(s[i] == i * size * (size - 1) / 2.0, "user sum[%d] = %g", i, s[i]);
    int mine[3] = {rank + 1, rank + 2, rank + 3}, got[3];
    OK(MPI_Allreduce(mine, got, 3, MPI_INT, keep, MPI_COMM_WORLD));
    CHECK(got[0] == 1 && got[2] == 3, "non-commutative user op in rank order: %d %d", got[0], got[2]);
    OK(MPI_Scan(mine, got, 3, MPI_INT, keep, MPI_COMM_WORLD));
    CHECK(got[1] == 2, "scan with the user op: %d", got[1]);
    OK(MPI_Op_free(&sum));
    OK(MPI_Op_free(&keep));
    CHECK(sum == MPI_OP_NULL, "op_free sets MPI_OP_NULL");
}

static void collectives(void)
{
    int x = rank + 1, sum = 0, all[64], *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    MPI_Request req;
    int tri = size * (size + 1) / 2;

    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

    int bc = rank == size - 1 ? 42 : 0;
    OK(MPI_Bcast(&bc, 1, MPI_INT, size - 1, MPI_COMM_WORLD));
    CHECK(bc == 42, "bcast %d", bc);

    OK(MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    CHECK(rank != 0 || sum == tri, "reduce %d", sum);
    sum = x;
    if (rank == 0)
        OK(MPI_Reduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    else
        OK(MPI_Reduce(&sum, NULL, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    CHECK(rank != 0 || sum == tri, "reduce in place %d", sum);

    float f = (float)rank, fmax;
    OK(MPI_Allreduce(&f, &fmax, 1, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(fmax == (float)(size - 1), "allreduce max %g", fmax);

    /* gather, gatherv, scatter, scatterv */
    OK(MPI_Gather(&x, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; rank == 0 && i < size; i++)
        CHECK(all[i] == i + 1, "gather[%d] = %d", i, all[i]);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = size - 1 - i;
    }
    OK(MPI_Gatherv(&x, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; rank == 0 && i < size; i++)
        CHECK(all[size - 1 - i] == i + 1, "gatherv");
    int part = -1;
    for (int i = 0; i < size; i++)
        all[i] = 100 + i;
    OK(MPI_Scatter(all, 1, MPI_INT, &part, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(part == 100 + rank, "scatter %d", part);
    OK(MPI_Scatterv(all, counts, displs, MPI_INT, &part, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(part == 100 + size - 1 - rank, "scatterv %d", part);

    /* allgather, in place too; allgatherv */
    OK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i + 1, "allgather");
    memset(all, 0, sizeof all);
    all[rank] = x;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i + 1, "allgather in place");
    OK(MPI_Allgatherv(&x, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(all[size - 1 - i] == i + 1, "allgatherv");

    /* alltoall and alltoallv */
    int snd[64], rcv[64];
    for (int i = 0; i < size; i++)
        snd[i] = rank * 100 + i;
    OK(MPI_Alltoall(snd, 1, MPI_INT, rcv, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(rcv[i] == i * 100 + rank, "alltoall[%d] = %d", i, rcv[i]);
    for (int i = 0; i < size; i++)
        displs[i] = i;
    OK(MPI_Alltoallv(snd, counts, displs, MPI_INT, rcv, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(rcv[i] == i * 100 + rank, "alltoallv");

    /* alltoallw: ints to even ranks, doubles to odd ones, byte displacements */
    {
        int *wc = malloc(size * sizeof(int)), *wd = malloc(size * sizeof(int));
        MPI_Datatype *wt = malloc(size * sizeof(MPI_Datatype));
        char *ws = malloc(size * 8), *wr = malloc(size * 8);
        for (int i = 0; i < size; i++) {
            wc[i] = 1;
            wd[i] = 8 * i;
            wt[i] = i % 2 == 0 ? MPI_INT : MPI_DOUBLE;
            if (i % 2 == 0)
                *(int *)(ws + 8 * i) = rank * 10 + i;
            else
                *(double *)(ws + 8 * i) = rank * 10 + i + 0.5;
        }
        /* what rank r sends me has the type of my parity */
        MPI_Datatype *rt = malloc(size * sizeof(MPI_Datatype));
        for (int i = 0; i < size; i++)
            rt[i] = rank % 2 == 0 ? MPI_INT : MPI_DOUBLE;
        OK(MPI_Alltoallw(ws, wc, wd, wt, wr, wc, wd, rt, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++) {
            if (rank % 2 == 0)
                CHECK(*(int *)(wr + 8 * i) == i * 10 + rank, "alltoallw int from %d", i);
            else
                CHECK(*(double *)(wr + 8 * i) == i * 10 + rank + 0.5, "alltoallw double from %d", i);
        }
        free(wc);
        free(wd);
        free(wt);
        free(rt);
        free(ws);
        free(wr);
    }

    /* reduce_scatter_block, scan, exscan */
    for (int i = 0; i < size; i++)
        snd[i] = i + rank;
    OK(MPI_Reduce_scatter_block(snd, &part, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(part == size * rank + size * (size - 1) / 2, "reduce_scatter_block %d", part);
    OK(MPI_Reduce_scatter(snd, &part, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(part == size * rank + size * (size - 1) / 2, "reduce_scatter %d", part);
    OK(MPI_Scan(&x, &part, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(part == (rank + 1) * (rank + 2) / 2, "scan %d", part);
    part = -7;
    OK(MPI_Exscan(&x, &part, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(rank == 0 || part == rank * (rank + 1) / 2, "exscan %d", part);

    /* nonblocking and persistent forms */
    double dv[3] = {rank, 2 * rank, 1}, dsum[3];
    OK(MPI_Iallreduce(dv, dsum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(dsum[2] == size && dsum[0] == size * (size - 1) / 2.0, "iallreduce");
    OK(MPI_Allreduce_init(dv, dsum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int k = 1; k <= 3; k++) {
        dv[2] = k;
        OK(MPI_Start(&req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(dsum[2] == k * size, "persistent allreduce round %d: %g", k, dsum[2]);
    }
    OK(MPI_Request_free(&req));
    bc = rank == 0 ? 7 : 0;
    OK(MPI_Ibcast(&bc, 1, MPI_INT, 0, MPI_COMM_WORLD, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(bc == 7, "ibcast");
    MPI_Request rr[3];
    OK(MPI_Igather(&x, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD, &rr[0]));
    OK(MPI_Iscan(&x, &part, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rr[1]));
    OK(MPI_Ialltoall(snd, 1, MPI_INT, rcv, 1, MPI_INT, MPI_COMM_WORLD, &rr[2]));
    OK(MPI_Waitall(3, rr, MPI_STATUSES_IGNORE));
    CHECK(part == (rank + 1) * (rank + 2) / 2, "iscan");
    for (int i = 0; rank == 0 && i < size; i++)
        CHECK(all[i] == i + 1, "igather");

    /* large-count variants */
    MPI_Count cn = 3, *ccounts = malloc(size * sizeof(MPI_Count));
    MPI_Aint *cdispls = malloc(size * sizeof(MPI_Aint));
    double dall[64];
    OK(MPI_Allreduce_c(dv, dsum, cn, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK(dsum[2] == 3 * size, "allreduce_c");
    for (int i = 0; i < size; i++) {
        ccounts[i] = 1;
        cdispls[i] = size - 1 - i;
    }
    double mine = rank;
    OK(MPI_Allgatherv_c(&mine, 1, MPI_DOUBLE, dall, ccounts, cdispls, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(dall[size - 1 - i] == i, "allgatherv_c");
    OK(MPI_Ibcast_c(dall, cn, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    free(ccounts);
    free(cdispls);

    /* MINLOC on MPI_2INT */
    int pair[2] = {rank == size / 2 ? -5 : rank, rank}, low[2];
    OK(MPI_Allreduce(pair, low, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(low[0] == -5 && low[1] == size / 2, "minloc %d %d", low[0], low[1]);

    /* reduce_local */
    int in3[3] = {1, 2, 3}, io3[3] = {10, 20, 30};
    OK(MPI_Reduce_local(in3, io3, 3, MPI_INT, MPI_SUM));
    CHECK(io3[2] == 33, "reduce_local");
    free(counts);
    free(displs);
}

static int copies, deletes;

static int copy_attr(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    CHECK(*(int *)extra == 7, "extra state");
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void attributes(void)
{
    static int extra = 7;
    static char base[4];
    int key, plain, flag;
    void *val;
    MPI_Comm dup;
    OK(MPI_Comm_create_keyval(copy_attr, delete_attr, &key, &extra));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &plain, NULL));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &val, &flag));
    CHECK(!flag, "no attribute yet");
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, base));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, plain, base + 2));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &val, &flag));
    CHECK(flag && val == base, "get_attr");
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(copies == 1, "copies %d", copies);
    OK(MPI_Comm_get_attr(dup, key, &val, &flag));
    CHECK(flag && val == base + 1, "the copy function's value");
    OK(MPI_Comm_get_attr(dup, plain, &val, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN does not copy");
    OK(MPI_Comm_set_attr(dup, key, base + 3)); /* replaces: deletes the old value */
    CHECK(deletes == 1, "deletes %d", deletes);
    OK(MPI_Comm_free(&dup));
    CHECK(deletes == 2, "comm_free deletes: %d", deletes);
    OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, key));
    CHECK(deletes == 3, "delete_attr: %d", deletes);
    OK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval");
    OK(MPI_Comm_free_keyval(&plain));
}

static void infos(void)
{
    MPI_Info info, dup;
    int n, flag, len;
    char key[MPI_MAX_INFO_KEY], val[MPI_MAX_INFO_VAL];
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "alpha", "1"));
    OK(MPI_Info_set(info, "beta", "two"));
    OK(MPI_Info_set(info, "alpha", "one"));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "nkeys %d", n);
    OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "beta") == 0, "nthkey %s", key);
    len = sizeof val;
    OK(MPI_Info_get_string(info, "alpha", &len, val, &flag));
    CHECK(flag && strcmp(val, "one") == 0 && len == 4, "get_string %s %d", val, len);
    OK(MPI_Info_dup(info, &dup));
    OK(MPI_Info_delete(info, "alpha"));
    OK(MPI_Info_get_valuelen(info, "alpha", &len, &flag));
    CHECK(!flag, "deleted");
    OK(MPI_Info_get(dup, "alpha", sizeof val - 1, val, &flag));
    CHECK(flag && strcmp(val, "one") == 0, "the dup keeps its keys");
    OK(MPI_Info_free(&info));
    OK(MPI_Info_free(&dup));
    CHECK(info == MPI_INFO_NULL, "info_free");

    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    OK(MPI_Comm_size(node, &n));
    CHECK(n == size, "every rank of this test is on one host: %d", n);
    OK(MPI_Comm_free(&node));
}

static void topologies(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], r, src, dst, st;
    MPI_Comm cart, row;
    OK(MPI_Dims_create(size, 2, dims));
    CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "dims %d x %d", dims[0], dims[1]);
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    OK(MPI_Topo_test(cart, &st));
    CHECK(st == MPI_CART, "topo_test %d", st);
    OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    CHECK(st == MPI_UNDEFINED, "topo_test on world %d", st);
    OK(MPI_Cartdim_get(cart, &st));
    CHECK(st == 2, "cartdim %d", st);
    OK(MPI_Cart_coords(cart, rank, 2, coords));
    OK(MPI_Cart_rank(cart, coords, &r));
    CHECK(r == rank && coords[0] == rank / dims[1] && coords[1] == rank % dims[1], "coords %d %d", coords[0], coords[1]);
    OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(dst == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1], "periodic shift dest %d", dst);
    OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    CHECK((coords[1] == dims[1] - 1) == (dst == MPI_PROC_NULL), "non-periodic shift dest %d", dst);
    CHECK((coords[1] == 0) == (src == MPI_PROC_NULL), "non-periodic shift source %d", src);
    int d2[2], p2[2], c2[2];
    OK(MPI_Cart_get(cart, 2, d2, p2, c2));
    CHECK(d2[0] == dims[0] && p2[0] == 1 && p2[1] == 0 && c2[1] == coords[1], "cart_get");
    int remain[2] = {0, 1};
    OK(MPI_Cart_sub(cart, remain, &row));
    OK(MPI_Comm_size(row, &st));
    CHECK(st == dims[1], "cart_sub size %d", st);
    OK(MPI_Comm_free(&row));
    OK(MPI_Comm_free(&cart));
}

static void communicators(void)
{
    MPI_Comm dup, half;
    int r, s, cmp;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare world dup: %d", cmp);
    OK(MPI_Comm_compare(dup, dup, &cmp));
    CHECK(cmp == MPI_IDENT, "compare dup dup: %d", cmp);
    OK(MPI_Comm_split(dup, rank % 2, -rank, &half));
    OK(MPI_Comm_rank(half, &r));
    OK(MPI_Comm_size(half, &s));
    CHECK(s == (size + 1 - rank % 2) / 2, "split size %d", s);
    CHECK(r == s - 1 - rank / 2, "split rank %d (key -rank reverses)", r);
    int sum;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int i = rank % 2; i < size; i += 2)
        want += i;
    CHECK(sum == want, "allreduce on split %d", sum);
    MPI_Comm none;
    OK(MPI_Comm_split(dup, rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
    CHECK((rank == 0) == (none == MPI_COMM_NULL), "undefined color");
    if (none != MPI_COMM_NULL)
        OK(MPI_Comm_free(&none));
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "comm_free sets MPI_COMM_NULL");
    OK(MPI_Comm_size(MPI_COMM_SELF, &s));
    CHECK(s == 1, "self");

    /* groups: the even ranks, made three ways, and a communicator over them */
    MPI_Group world, evens, evens2, evens3, odds, all, empty;
    int ranks[64], ne = 0, gs, gr;
    for (int i = 0; i < size; i += 2)
        ranks[ne++] = i;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_size(world, &gs));
    OK(MPI_Group_rank(world, &gr));
    CHECK(gs == size && gr == rank, "world group %d %d", gs, gr);
    OK(MPI_Group_incl(world, ne, ranks, &evens));
    int range[1][3] = {{0, size - 1, 2}};
    OK(MPI_Group_range_incl(world, 1, range, &evens2));
    OK(MPI_Group_compare(evens, evens2, &cmp));
    CHECK(cmp == MPI_IDENT, "incl and range_incl: %d", cmp);
    OK(MPI_Group_difference(world, evens, &odds));
    OK(MPI_Group_difference(world, odds, &evens3));
    OK(MPI_Group_compare(evens, evens3, &cmp));
    CHECK(cmp == MPI_IDENT, "difference twice: %d", cmp);
    OK(MPI_Group_union(odds, evens, &all));
    OK(MPI_Group_compare(all, world, &cmp));
    CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "union: %d", cmp);
    OK(MPI_Group_intersection(odds, evens, &empty));
    CHECK(empty == MPI_GROUP_EMPTY, "an empty intersection is MPI_GROUP_EMPTY");
    OK(MPI_Group_rank(evens, &gr));
    CHECK(gr == (rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED), "rank in evens %d", gr);
    int tr[2] = {0, ne - 1}, out[2];
    OK(MPI_Group_translate_ranks(evens, 2, tr, world, out));
    CHECK(out[0] == 0 && out[1] == ranks[ne - 1], "translate %d %d", out[0], out[1]);
    MPI_Comm ec;
    OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &ec));
    CHECK((rank % 2 == 0) == (ec != MPI_COMM_NULL), "comm_create membership");
    if (ec != MPI_COMM_NULL) {
        OK(MPI_Comm_size(ec, &s));
        CHECK(s == ne, "comm_create size %d", s);
        OK(MPI_Comm_set_name(ec, "evens"));
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        OK(MPI_Comm_get_name(ec, name, &len));
        CHECK(strcmp(name, "evens") == 0 && len == 5, "name %s", name);
        OK(MPI_Comm_free(&ec));
    }
    MPI_Group *gs_[] = {&world, &evens, &evens2, &evens3, &odds, &all, &empty};
    for (int i = 0; i < 7; i++) {
        OK(MPI_Group_free(gs_[i]));
        CHECK(*gs_[i] == MPI_GROUP_NULL, "group_free");
    }
    char wname[MPI_MAX_OBJECT_NAME];
    int wlen;
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, wname, &wlen));
    CHECK(strcmp(wname, "MPI_COMM_WORLD") == 0, "world's name %s", wname);

    int size_i;
    MPI_Aint lb, extent;
    OK(MPI_Type_size(MPI_DOUBLE_INT, &size_i));
    OK(MPI_Type_get_extent(MPI_SHORT, &lb, &extent));
    /* MPI_DOUBLE_INT's typemap is {(double, 0), (int, 8)}: 12 bytes, extent 16 */
    CHECK(size_i == 12 && lb == 0 && extent == 2, "type sizes %d %ld", size_i, (long)extent);
}

int main(int argc, char **argv)
{
    int provided, flag, maj, min;
    OK(MPI_Initialized(&flag));
    CHECK(!flag, "initialized before init");
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    OK(MPI_Query_thread(&flag));
    CHECK(flag == provided && provided >= MPI_THREAD_FUNNELED, "thread level %d", provided);
    OK(MPI_Abi_get_version(&maj, &min));
    CHECK(maj == 1 && min == 0, "abi %d.%d", maj, min);
    OK(MPI_Get_version(&maj, &min));
    CHECK(maj == MPI_VERSION && min == MPI_SUBVERSION, "version %d.%d", maj, min);
    int *attr, *usize, *global;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &flag));
    CHECK(flag && *attr >= 32767, "tag ub");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(flag && *usize == size, "universe size");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag));
    CHECK(flag && *global == 0, "wtime is global");
    double t0 = MPI_Wtime();
    CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1e-3, "wtick");

    p2p();
    collectives();
    userops();
    communicators();
    attributes();
    topologies();
    infos();

    CHECK(MPI_Wtime() >= t0, "wtime");
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag, "finalized");
    if (rank == 0)
        printf("calls ok on %d ranks\n", size);
    return 0;
}
