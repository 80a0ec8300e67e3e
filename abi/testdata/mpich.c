/* mpich.c: the cases that running MPICH's test suite (test/mpi: pt2pt,
 * coll, comm, group, topo) against the binding found wrong or missing,
 * each checked on its own so that a regression names itself. Run on 2 to
 * 4 ranks; prints "mpich ok" at rank 0. */
#include <mpi.h>
#include <string.h>
#include "check.h"

/* gcc takes MPI_UNWEIGHTED ((int *)10) passed as a const int[] for an
 * array it would read */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

static int rank, size;

/* Intercommunicators: MTestGetIntercomm builds them with
 * MPI_Intercomm_create and MPI_Intercomm_merge. */
static void intercomm(void)
{
    MPI_Comm half, inter, merged;
    int color = rank % 2, flag, rsize, lsize, n;
    MPI_Group rg;

    if (size < 2)
        return;
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half));
    OK(MPI_Comm_test_inter(half, &flag));
    CHECK(!flag, "an intracommunicator tests as inter");
    /* peer_comm is not significant at the non-leaders: MPI_COMM_NULL */
    OK(MPI_Intercomm_create(half, 0, rank == 0 || rank == 1 ? MPI_COMM_WORLD : MPI_COMM_NULL,
                            1 - color, 7, &inter));
    OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "an intercommunicator tests as intra");
    OK(MPI_Comm_size(inter, &lsize));
    OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK(lsize == (size + 1 - color) / 2, "local size %d", lsize);
    CHECK(rsize == size - lsize, "remote size %d, local %d", rsize, lsize);
    OK(MPI_Comm_remote_group(inter, &rg));
    OK(MPI_Group_size(rg, &n));
    CHECK(n == rsize, "remote group size %d, remote size %d", n, rsize);
    OK(MPI_Group_free(&rg));

    /* the groups' rank 0s exchange over the intercommunicator */
    int lrank;
    OK(MPI_Comm_rank(inter, &lrank));
    if (lrank == 0) {
        int out = 100 + color, in = -1;
        MPI_Status st;
        OK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, inter, &st));
        CHECK(in == 100 + (1 - color), "got %d", in);
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 3, "status source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
    }
    /* a rooted collective: group 0's rank 0 is the root */
    int v = color == 0 && lrank == 0 ? 42 : -1;
    int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    OK(MPI_Bcast(&v, 1, MPI_INT, root, inter));
    if (color == 1)
        CHECK(v == 42, "bcast over an intercommunicator gave %d", v);

    /* MPI_Comm_create on an intercommunicator: each group drops its
     * rank 0 (MTestGetIntercomm's case 6) */
    MPI_Group lg, ng;
    MPI_Comm sub;
    int zero = 0;
    OK(MPI_Comm_group(inter, &lg));
    OK(MPI_Group_excl(lg, 1, &zero, &ng));
    OK(MPI_Comm_create(inter, ng, &sub));
    if (lrank == 0 || size < 4) {
        CHECK(sub == MPI_COMM_NULL, "rank %d of its group is in the new intercommunicator", lrank);
    } else {
        int f2, sr, ss;
        CHECK(sub != MPI_COMM_NULL, "no new intercommunicator");
        OK(MPI_Comm_test_inter(sub, &f2));
        OK(MPI_Comm_remote_size(sub, &sr));
        OK(MPI_Comm_size(sub, &ss));
        CHECK(f2 && ss == lsize - 1 && sr == rsize - 1, "created: inter %d size %d remote %d", f2,
              ss, sr);
        int x = 10 * color, y = -1;
        OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, sub));
        CHECK(y == 10 * (1 - color) * (rsize - 1), "allreduce over the created one: %d", y);
        OK(MPI_Comm_free(&sub));
    }
    OK(MPI_Group_free(&ng));
    OK(MPI_Group_free(&lg));

    OK(MPI_Intercomm_merge(inter, color, &merged));
    OK(MPI_Comm_test_inter(merged, &flag));
    CHECK(!flag, "a merged communicator tests as inter");
    OK(MPI_Comm_size(merged, &n));
    CHECK(n == size, "merged size %d", n);
    int mrank;
    OK(MPI_Comm_rank(merged, &mrank));
    /* high = color: the even ranks (low) come first */
    CHECK(color == 0 ? mrank < lsize : mrank >= rsize, "merged rank %d (color %d)", mrank, color);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&half));
}

/* An empty message may name MPI_DATATYPE_NULL (pt2pt/recvnull), and
 * MPI_COMM_NULL has a name (comm/commname). */
static void nulls(void)
{
    MPI_Request req;
    MPI_Status st;
    char name[MPI_MAX_OBJECT_NAME];
    int len;

    OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &req));
    OK(MPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "status %d %d",
          st.MPI_SOURCE, st.MPI_TAG);
    OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "status source %d", st.MPI_SOURCE);
    OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD));
    CHECK(MPI_Send(NULL, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD) != MPI_SUCCESS,
          "a count of 1 with MPI_DATATYPE_NULL");
    OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == 13, "name of MPI_COMM_NULL: %s", name);
}

/* Graph and distributed graph topologies (topo/graphcr, distgraph1): a
 * ring of every rank. */
static void graphs(void)
{
    int index[4], edges[8], n = size, ne = 0, t, nn, nedges, cnt, nb[2];
    MPI_Comm g, dg;

    if (size > 4)
        return;
    for (int r = 0; r < n; r++) {
        if (n > 1) {
            edges[ne++] = (r + 1) % n;
            edges[ne++] = (r + n - 1) % n;
        }
        index[r] = ne;
    }
    OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    CHECK(g != MPI_COMM_NULL, "no graph communicator");
    OK(MPI_Topo_test(g, &t));
    CHECK(t == MPI_GRAPH, "topo %d", t);
    OK(MPI_Graphdims_get(g, &nn, &nedges));
    CHECK(nn == n && nedges == ne, "graphdims %d %d", nn, nedges);
    OK(MPI_Graph_neighbors_count(g, rank, &cnt));
    CHECK(cnt == (n > 1 ? 2 : 0), "%d neighbors", cnt);
    if (cnt == 2) {
        OK(MPI_Graph_neighbors(g, rank, 2, nb));
        CHECK(nb[0] == (rank + 1) % n && nb[1] == (rank + n - 1) % n, "neighbors %d %d", nb[0],
              nb[1]);
    }
    int gi[4], ge[8];
    OK(MPI_Graph_get(g, n, ne, gi, ge));
    CHECK(gi[n - 1] == ne, "graph_get index %d", gi[n - 1]);
    int nr;
    OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &nr));
    CHECK(nr == rank, "graph_map %d", nr);
    OK(MPI_Comm_free(&g));

    int src = (rank + n - 1) % n, dst = (rank + 1) % n, in, out, w;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    OK(MPI_Topo_test(dg, &t));
    CHECK(t == MPI_DIST_GRAPH, "topo %d", t);
    OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w));
    CHECK(in == 1 && out == 1 && !w, "dist graph counts %d %d %d", in, out, w);
    int s2 = -1, d2 = -1, sw = -1, dw = -1;
    OK(MPI_Dist_graph_neighbors(dg, 1, &s2, &sw, 1, &d2, &dw));
    CHECK(s2 == src && d2 == dst, "dist graph neighbors %d %d", s2, d2);
    OK(MPI_Comm_free(&dg));

    /* every rank names its out-edge (MPI_Dist_graph_create) */
    int deg = 1, wt = 5;
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &deg, &dst, &wt, MPI_INFO_NULL, 0, &dg));
    OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w));
    CHECK(in == 1 && out == 1 && w, "dist graph create counts %d %d %d", in, out, w);
    OK(MPI_Comm_free(&dg));

    /* no edges and NULL weights: weighted (only MPI_UNWEIGHTED is not) */
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, NULL, MPI_INFO_NULL, 0, &dg));
    OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w));
    CHECK(in == 0 && out == 0 && w, "empty dist graph counts %d %d %d", in, out, w);
    OK(MPI_Comm_free(&dg));
}

/* MPI_Ibsend (pt2pt/bsend4, rqfree): buffered, so complete at once */
static void ibsend(void)
{
    static char bbuf[4096];
    int v = 1000 + rank, got = -1, sz, flag = 0;
    void *b;
    MPI_Request req;
    MPI_Status st;

    OK(MPI_Buffer_attach(bbuf, sizeof bbuf));
    OK(MPI_Ibsend(&v, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &req));
    OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && req == MPI_REQUEST_NULL, "an Ibsend's request is not complete at once");
    OK(MPI_Recv(&got, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &st));
    CHECK(got == 1000 + (rank + size - 1) % size, "got %d", got);
    OK(MPI_Buffer_detach(&b, &sz));
    CHECK(b == bbuf && sz == (int) sizeof bbuf, "detach gave %p %d", b, sz);

    /* pt2pt/bsend5: ten 40-byte messages fit in 2000 bytes (MPICH charges
     * 96 bytes of overhead each, not MPI_BSEND_OVERHEAD's bound) */
    static char small[2000];
    int a[10] = {0}, r[10];
    OK(MPI_Buffer_attach(small, sizeof small));
    for (int j = 0; j < 10; j++)
        OK(MPI_Bsend(a, 10, MPI_INT, rank, 40 + j, MPI_COMM_WORLD));
    for (int j = 0; j < 10; j++)
        OK(MPI_Recv(r, 10, MPI_INT, rank, 40 + j, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Buffer_detach(&b, &sz));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    intercomm();
    nulls();
    graphs();
    ibsend();
    OK(MPI_Finalize());
    if (rank == 0)
        printf("mpich ok\n");
    return 0;
}
