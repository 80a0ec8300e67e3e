/* mpich2.c: more cases that MPICH's test suite (test/mpi) found missing
 * or wrong in the binding, after those of mpich.c: MPI_Comm_create_group,
 * MPI_Comm_idup, intercommunicator collectives, MPI_Isendrecv and the
 * cancel of a send. Run on 1 to 4 ranks; prints "mpich2 ok" at rank 0. */
#include <mpi.h>
#include <string.h>
#include "check.h"

/* gcc takes MPI_UNWEIGHTED ((int *)10) passed as a const int[] for an
 * array it would read */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

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

/* intercommunicator collectives (coll/icgather, icallgather, icalltoall,
 * icreduce, icscatter … over MTestGetIntercomm's communicators): blocks
 * and counts are over the remote group; the root passes MPI_ROOT, the
 * rest of its group MPI_PROC_NULL */
static void inter_coll(void)
{
    MPI_Comm half, inter;
    int color = rank % 2, lrank, lsize, rsize, i;
    int buf[8], all[8], counts[8], displs[8];

    if (size < 2)
        return;
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half));
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 9, &inter));
    OK(MPI_Comm_rank(inter, &lrank));
    OK(MPI_Comm_size(inter, &lsize));
    OK(MPI_Comm_remote_size(inter, &rsize));
    /* a remote rank r is world rank 2r + (1 - color) */
#define REMOTE(r) (2 * (r) + 1 - color)
    int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;

    /* gather: group 1's ranks to group 0's rank 0 */
    int v = rank;
    for (i = 0; i < 8; i++)
        all[i] = -1;
    OK(MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, root, inter));
    if (root == MPI_ROOT)
        for (i = 0; i < rsize; i++)
            CHECK(all[i] == REMOTE(i), "gather: block %d is %d", i, all[i]);
    /* gatherv, each remote rank's block at 2i */
    for (i = 0; i < rsize; i++)
        counts[i] = 1, displs[i] = 2 * i;
    for (i = 0; i < 8; i++)
        all[i] = -1;
    OK(MPI_Gatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, root, inter));
    if (root == MPI_ROOT)
        for (i = 0; i < rsize; i++)
            CHECK(all[2 * i] == REMOTE(i), "gatherv: block %d is %d", i, all[2 * i]);
    /* scatter from group 0's rank 0 */
    for (i = 0; i < 8; i++)
        all[i] = 100 + i;
    v = -1;
    OK(MPI_Scatter(all, 1, MPI_INT, &v, 1, MPI_INT, root, inter));
    if (color == 1)
        CHECK(v == 100 + lrank, "scatter gave %d", v);
    /* reduce to group 0's rank 0 */
    int sum = -1;
    v = rank;
    OK(MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, root, inter));
    if (root == MPI_ROOT) {
        int want = 0;
        for (i = 0; i < rsize; i++)
            want += REMOTE(i);
        CHECK(sum == want, "reduce gave %d, want %d", sum, want);
    }
    /* allgather and allgatherv: both ways */
    for (i = 0; i < 8; i++)
        all[i] = -1;
    OK(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, inter));
    for (i = 0; i < rsize; i++)
        CHECK(all[i] == REMOTE(i), "allgather: block %d is %d", i, all[i]);
    for (i = 0; i < 8; i++)
        all[i] = -1;
    OK(MPI_Allgatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, inter));
    for (i = 0; i < rsize; i++)
        CHECK(all[2 * i] == REMOTE(i), "allgatherv: block %d is %d", i, all[2 * i]);
    /* alltoall: block i to remote rank i */
    for (i = 0; i < rsize; i++)
        buf[i] = 1000 * rank + i;
    for (i = 0; i < 8; i++)
        all[i] = -1;
    OK(MPI_Alltoall(buf, 1, MPI_INT, all, 1, MPI_INT, inter));
    for (i = 0; i < rsize; i++)
        CHECK(all[i] == 1000 * REMOTE(i) + lrank, "alltoall: block %d is %d", i, all[i]);
    /* a nonblocking one too */
    MPI_Request req;
    v = rank;
    for (i = 0; i < 8; i++)
        all[i] = -1;
    OK(MPI_Igather(&v, 1, MPI_INT, all, 1, MPI_INT, root, inter, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (root == MPI_ROOT)
        for (i = 0; i < rsize; i++)
            CHECK(all[i] == REMOTE(i), "igather: block %d is %d", i, all[i]);
#undef REMOTE
    (void) lsize;
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&half));
}

/* MPI_Comm_idup (comm/comm_idup, comm_idup_mul, comm_idup_iallreduce):
 * newcomm is usable once the request completes, with collectives on the
 * parent and other idups in flight meanwhile */
static void comm_idup(void)
{
    MPI_Comm d[3];
    MPI_Request reqs[4];
    int i, n, sum = -1, one = 1, cmp;

    for (i = 0; i < 3; i++)
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[i], &reqs[i]));
    OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[3]));
    OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    CHECK(sum == size, "iallreduce on the parent gave %d", sum);
    for (i = 0; i < 3; i++) {
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed", i);
        OK(MPI_Comm_compare(MPI_COMM_WORLD, d[i], &cmp));
        CHECK(cmp == MPI_CONGRUENT, "idup %d compares %d", i, cmp);
        OK(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, d[i]));
        CHECK(n == size, "allreduce over idup %d gave %d", i, n);
        OK(MPI_Comm_free(&d[i]));
    }
    /* one completed by MPI_Test */
    int flag = 0;
    OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &d[0], &reqs[0]));
    while (!flag)
        OK(MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE));
    OK(MPI_Barrier(d[0]));
    OK(MPI_Comm_free(&d[0]));
}

/* MPI_Isendrecv and Isendrecv_replace (pt2pt/isendrecv, isendrecv_replace,
 * sendrecv3 -isendrecv): around the ring, a derived type's too */
static void isendrecv(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, i, n;
    int out[4], in[4] = {-1, -1, -1, -1};
    MPI_Request req;
    MPI_Status st;

    for (i = 0; i < 4; i++)
        out[i] = 10 * rank + i;
    OK(MPI_Isendrecv(out, 4, MPI_INT, next, 6, in, 4, MPI_INT, prev, 6, MPI_COMM_WORLD, &req));
    OK(MPI_Wait(&req, &st));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 6 && n == 4, "status source %d tag %d count %d",
          st.MPI_SOURCE, st.MPI_TAG, n);
    for (i = 0; i < 4; i++)
        CHECK(in[i] == 10 * prev + i, "isendrecv: in[%d] = %d", i, in[i]);

    OK(MPI_Isendrecv_replace(out, 4, MPI_INT, next, 8, prev, 8, MPI_COMM_WORLD, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (i = 0; i < 4; i++)
        CHECK(out[i] == 10 * prev + i, "isendrecv_replace: out[%d] = %d", i, out[i]);

    /* every other int, by a vector type, replaced in place */
    MPI_Datatype every2;
    int v[8];
    OK(MPI_Type_vector(4, 1, 2, MPI_INT, &every2));
    OK(MPI_Type_commit(&every2));
    for (i = 0; i < 8; i++)
        v[i] = i % 2 ? -7 : 100 * rank + i;
    OK(MPI_Isendrecv_replace(v, 1, every2, next, 9, prev, 9, MPI_COMM_WORLD, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (i = 0; i < 8; i++)
        CHECK(v[i] == (i % 2 ? -7 : 100 * prev + i), "derived isendrecv_replace: v[%d] = %d", i, v[i]);
    OK(MPI_Type_free(&every2));
}

/* a type of no bytes on one side of a collective (coll/alltoallw_zeros):
 * it moves nothing, whatever the other side's type */
static void zero_types(void)
{
    MPI_Datatype none;
    int counts[4], zeros[4], displs[4], in[4] = {0}, out[4] = {0}, i;

    if (size > 4)
        return;
    OK(MPI_Type_contiguous(0, MPI_INT, &none));
    OK(MPI_Type_commit(&none));
    for (i = 0; i < size; i++)
        counts[i] = 1, zeros[i] = 0, displs[i] = i;
    OK(MPI_Alltoallv(out, counts, displs, none, in, zeros, displs, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Alltoallv(out, zeros, displs, MPI_INT, in, counts, displs, none, MPI_COMM_WORLD));
    OK(MPI_Type_free(&none));
}

/* MPI_Comm_split_type's hardware types (comm/cmsplit_type): the reserved
 * resource "mpi_shared_memory" is the host, anything else MPI_COMM_NULL */
static void split_types(void)
{
    MPI_Comm c, shm;
    MPI_Info info;
    int n, m;

    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    OK(MPI_Comm_size(shm, &m));
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c != MPI_COMM_NULL, "mpi_shared_memory gave MPI_COMM_NULL");
    OK(MPI_Comm_size(c, &n));
    CHECK(n == m, "mpi_shared_memory: size %d, the host's %d", n, m);
    OK(MPI_Comm_free(&c));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "__garbage_value__"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "an unknown resource made a communicator");
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "no resource made a communicator");
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "the unguided split made a communicator");
    OK(MPI_Info_free(&info));
    OK(MPI_Comm_free(&shm));
}

/* MPI_Neighbor_alltoall and allgather on a periodic ring
 * (coll/ring_neighbor_alltoall): block 0 goes to and comes from the
 * -1 neighbor, block 1 the +1 neighbor */
static void neighbors(void)
{
    MPI_Comm ring;
    MPI_Request req;
    int dims[1] = {size}, periods[1] = {1};
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int sb[2] = {100 * rank, 100 * rank + 1}, rb[2] = {-1, -1}, v = rank;

    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ring));
    CHECK(rb[0] == 100 * left + 1 && rb[1] == 100 * right, "neighbor_alltoall gave %d %d", rb[0],
          rb[1]);
    rb[0] = rb[1] = -1;
    OK(MPI_Ineighbor_allgather(&v, 1, MPI_INT, rb, 1, MPI_INT, ring, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(rb[0] == left && rb[1] == right, "ineighbor_allgather gave %d %d", rb[0], rb[1]);
    OK(MPI_Comm_free(&ring));
}

/* MPI_Neighbor_alltoallw (coll/neighb_alltoallw2): over a distributed
 * graph, MPI_Aint byte displacements, types per neighbor */
static void neighbors_w(void)
{
    MPI_Comm g;
    int src[1] = {(rank + size - 1) % size}, dst[1] = {(rank + 1) % size};
    int counts[1] = {1}, sb[2] = {-5, 1000 + rank}, rb[2] = {-1, -1};
    MPI_Aint sd[1] = {sizeof(int)}, rd[1] = {sizeof(int)};
    MPI_Datatype types[1] = {MPI_INT};

    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED,
                                      MPI_INFO_NULL, 0, &g));
    OK(MPI_Neighbor_alltoallw(sb, counts, sd, types, rb, counts, rd, types, g));
    CHECK(rb[0] == -1 && rb[1] == 1000 + src[0], "neighbor_alltoallw gave %d %d", rb[0], rb[1]);
    OK(MPI_Comm_free(&g));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    create_group();
    inter_coll();
    comm_idup();
    isendrecv();
    zero_types();
    split_types();
    neighbors();
    neighbors_w();
    OK(MPI_Finalize());
    if (rank == 0)
        printf("mpich2 ok\n");
    return 0;
}
