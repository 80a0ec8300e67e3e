/* types.c: derived datatypes in the C binding: every constructor's layout
 * against hand-computed offsets, envelopes and contents, pack and unpack,
 * point-to-point and collectives with derived types, and their errors.
 * Prints "types ok" at rank 0. Needs 2 ranks or more for the
 * communication checks; alone it checks the layouts only. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "check.h"

static int rank, size;

/* layout packs count elements of t from a[] (a[i] == i, the origin at
 * a[origin]) and checks the ints it yields, and the type's bounds. */
static void layout(const char *what, MPI_Datatype t, int count, int origin, const int *want, int n,
                   MPI_Aint lb, MPI_Aint extent, int tsize)
{
    int a[256], packed[256], pos = 0, psize, sz;
    MPI_Aint l, x;
    for (int i = 0; i < 256; i++)
        a[i] = i;
    OK(MPI_Type_size(t, &sz));
    CHECK(sz == tsize, "%s: size %d, want %d", what, sz, tsize);
    OK(MPI_Type_get_extent(t, &l, &x));
    CHECK(l == lb && x == extent, "%s: lb %ld extent %ld, want %ld %ld", what, (long)l, (long)x, (long)lb, (long)extent);
    OK(MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize));
    CHECK(psize == n * (int)sizeof(int), "%s: pack size %d", what, psize);
    OK(MPI_Pack(a + origin, count, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == n * (int)sizeof(int), "%s: position %d after packing, want %d", what, pos, n * (int)sizeof(int));
    for (int i = 0; i < n; i++)
        CHECK(packed[i] == want[i] + origin, "%s: packed[%d] = %d, want %d", what, i, packed[i], want[i] + origin);
    /* and back: unpacking writes exactly those ints */
    int b[256];
    memset(b, 0xff, sizeof b);
    pos = 0;
    OK(MPI_Unpack(packed, sizeof packed, &pos, b + origin, count, t, MPI_COMM_WORLD));
    int touched = 0;
    for (int i = 0; i < 256; i++)
        if (b[i] != -1) {
            CHECK(b[i] == i, "%s: unpack wrote %d at %d", what, b[i], i);
            touched++;
        }
    CHECK(touched == n, "%s: unpack touched %d ints, want %d", what, touched, n);
}

#define LAYOUT(what, t, count, origin, lb, extent, tsize, ...)                                   \
    do {                                                                                          \
        const int want_[] = {__VA_ARGS__};                                                        \
        layout(what, t, count, origin, want_, sizeof want_ / sizeof want_[0], lb, extent, tsize); \
    } while (0)

static MPI_Datatype commit(MPI_Datatype t)
{
    OK(MPI_Type_commit(&t));
    return t;
}

static void constructors(void)
{
    const int I = sizeof(int);
    MPI_Datatype t;

    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    t = commit(t);
    LAYOUT("contiguous", t, 2, 0, 0, 3 * I, 3 * I, 0, 1, 2, 3, 4, 5);
    OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");

    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    t = commit(t);
    LAYOUT("vector", t, 1, 0, 0, 10 * I, 6 * I, 0, 1, 4, 5, 8, 9);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hvector(2, 1, 3 * I, MPI_INT, &t));
    t = commit(t);
    LAYOUT("hvector", t, 2, 0, 0, 4 * I, 2 * I, 0, 3, 4, 7);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_indexed(2, (int[]){2, 1}, (int[]){3, 0}, MPI_INT, &t));
    t = commit(t);
    LAYOUT("indexed", t, 1, 0, 0, 5 * I, 3 * I, 3, 4, 0);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){2 * I, 5 * I}, MPI_INT, &t));
    t = commit(t);
    LAYOUT("hindexed", t, 1, 0, 2 * I, 5 * I, 3 * I, 2, 5, 6);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_indexed_block(3, 1, (int[]){5, 1, 3}, MPI_INT, &t));
    t = commit(t);
    LAYOUT("indexed_block", t, 1, 0, I, 5 * I, 3 * I, 5, 1, 3);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hindexed_block(2, 2, (MPI_Aint[]){0, 4 * I}, MPI_INT, &t));
    t = commit(t);
    LAYOUT("hindexed_block", t, 2, 0, 0, 6 * I, 4 * I, 0, 1, 4, 5, 6, 7, 10, 11);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_resized(MPI_INT, 0, 2 * I, &t));
    t = commit(t);
    LAYOUT("resized", t, 3, 0, 0, 2 * I, I, 0, 2, 4);
    OK(MPI_Type_free(&t));

    /* a negative lower bound: the data lies before the origin */
    OK(MPI_Type_create_hindexed(2, (int[]){1, 1}, (MPI_Aint[]){-2 * I, 0}, MPI_INT, &t));
    t = commit(t);
    LAYOUT("negative lb", t, 2, 10, -2 * I, 3 * I, 2 * I, -2, 0, 1, 3);
    MPI_Aint tlb, text;
    OK(MPI_Type_get_true_extent(t, &tlb, &text));
    CHECK(tlb == -2 * I && text == 3 * I, "true extent %ld %ld", (long)tlb, (long)text);
    OK(MPI_Type_free(&t));

    /* a 4x5 array, rows of 5 (C order): the 2x3 block at (1, 1) */
    OK(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 1}, MPI_ORDER_C, MPI_INT, &t));
    t = commit(t);
    LAYOUT("subarray C", t, 1, 0, 0, 20 * I, 6 * I, 6, 7, 8, 11, 12, 13);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_subarray(2, (int[]){5, 4}, (int[]){3, 2}, (int[]){1, 1}, MPI_ORDER_FORTRAN, MPI_INT, &t));
    t = commit(t);
    LAYOUT("subarray Fortran", t, 1, 0, 0, 20 * I, 6 * I, 6, 7, 8, 11, 12, 13);
    OK(MPI_Type_free(&t));

    /* a 4x4 array in 2x2 blocks over 4 processes: process 1 is (0, 1) */
    OK(MPI_Type_create_darray(4, 1, 2, (int[]){4, 4}, (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
                              (int[]){MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2, 2},
                              MPI_ORDER_C, MPI_INT, &t));
    t = commit(t);
    LAYOUT("darray block", t, 1, 0, 0, 16 * I, 4 * I, 2, 3, 6, 7);
    OK(MPI_Type_free(&t));
    /* 10 elements cyclic(2) over 3 processes: process 1 holds 2, 3, 8, 9 */
    OK(MPI_Type_create_darray(3, 1, 1, (int[]){10}, (int[]){MPI_DISTRIBUTE_CYCLIC}, (int[]){2}, (int[]){3},
                              MPI_ORDER_C, MPI_INT, &t));
    t = commit(t);
    LAYOUT("darray cyclic", t, 1, 0, 0, 10 * I, 4 * I, 2, 3, 8, 9);
    OK(MPI_Type_free(&t));

    /* a type of nothing */
    OK(MPI_Type_contiguous(0, MPI_INT, &t));
    t = commit(t);
    int sz;
    MPI_Aint lb, x;
    OK(MPI_Type_size(t, &sz));
    OK(MPI_Type_get_extent(t, &lb, &x));
    CHECK(sz == 0 && x == 0, "empty type: size %d extent %ld", sz, (long)x);
    OK(MPI_Type_free(&t));

    /* a struct with gaps: char, double, int */
    struct rec {
        char c;
        double d;
        int i;
    };
    MPI_Datatype rt;
    OK(MPI_Type_create_struct(3, (int[]){1, 1, 1},
                              (MPI_Aint[]){offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)},
                              (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT}, &rt));
    rt = commit(rt);
    OK(MPI_Type_size(rt, &sz));
    OK(MPI_Type_get_extent(rt, &lb, &x));
    CHECK(sz == 13 && lb == 0 && x == (MPI_Aint)sizeof(struct rec), "struct: size %d lb %ld extent %ld", sz, (long)lb, (long)x);
    struct rec in[2] = {{'a', 1.5, 7}, {'b', 2.5, 8}}, out[2];
    char buf[64];
    int pos = 0;
    OK(MPI_Pack(in, 2, rt, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 26, "struct packs to %d bytes", pos);
    memset(out, 0, sizeof out);
    pos = 0;
    OK(MPI_Unpack(buf, sizeof buf, &pos, out, 2, rt, MPI_COMM_WORLD));
    CHECK(out[1].c == 'b' && out[1].d == 2.5 && out[1].i == 8 && out[0].c == 'a', "struct round trip");
    /* a status of 20 bytes of it: one element and 7 bytes, a char and a double */
    MPI_Status st;
    OK(MPI_Status_set_elements(&st, MPI_BYTE, 20));
    int n;
    OK(MPI_Get_count(&st, rt, &n));
    CHECK(n == MPI_UNDEFINED, "Get_count of a partial struct: %d", n);
    OK(MPI_Get_elements(&st, rt, &n));
    CHECK(n == MPI_UNDEFINED, "Get_elements ending inside a double: %d", n);
    OK(MPI_Status_set_elements(&st, rt, 5));
    OK(MPI_Get_elements(&st, rt, &n));
    CHECK(n == 5, "Get_elements after set_elements 5: %d", n);
    OK(MPI_Get_count(&st, rt, &n));
    CHECK(n == MPI_UNDEFINED, "5 basic elements are not whole structs: %d", n);
    OK(MPI_Type_free(&rt));
}

static int count_delete(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)val;
    ++*(int *)extra;
    return MPI_SUCCESS;
}

static void contents(void)
{
    MPI_Datatype v, s, got[3];
    int ni, na, nd, comb, ints[8];
    MPI_Aint addrs[8];

    OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "MPI_INT's envelope");

    OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &v));
    OK(MPI_Type_get_envelope(v, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1, "vector envelope %d %d %d %d", ni, na, nd, comb);
    OK(MPI_Type_get_contents(v, 8, 8, 3, ints, addrs, got));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && got[0] == MPI_DOUBLE, "vector contents");

    OK(MPI_Type_create_struct(2, (int[]){1, 2}, (MPI_Aint[]){0, 16}, (MPI_Datatype[]){v, MPI_INT}, &s));
    OK(MPI_Type_get_envelope(s, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2, "struct envelope %d %d %d %d", ni, na, nd, comb);
    OK(MPI_Type_get_contents(s, 8, 8, 3, ints, addrs, got));
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && addrs[0] == 0 && addrs[1] == 16 && got[1] == MPI_INT,
          "struct contents");
    /* the derived type comes back as a new handle to free, equal in kind */
    OK(MPI_Type_get_envelope(got[0], &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3, "the struct's field type is the vector");
    OK(MPI_Type_free(&got[0]));

    MPI_Datatype r, d;
    OK(MPI_Type_create_resized(v, -8, 100, &r));
    OK(MPI_Type_get_envelope(r, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_RESIZED && ni == 0 && na == 2 && nd == 1, "resized envelope");
    OK(MPI_Type_get_contents(r, 0, 2, 1, ints, addrs, got));
    CHECK(addrs[0] == -8 && addrs[1] == 100, "resized contents");
    OK(MPI_Type_free(&got[0]));
    OK(MPI_Type_dup(r, &d));
    OK(MPI_Type_get_envelope(d, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_DUP && nd == 1, "dup envelope");
    MPI_Aint lb, x;
    OK(MPI_Type_get_extent(d, &lb, &x));
    CHECK(lb == -8 && x == 100, "dup keeps the bounds");

    MPI_Datatype sa;
    OK(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 1}, MPI_ORDER_C, MPI_INT, &sa));
    OK(MPI_Type_get_envelope(sa, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nd == 1, "subarray envelope");
    OK(MPI_Type_get_contents(sa, 8, 0, 1, ints, addrs, got));
    CHECK(ints[0] == 2 && ints[1] == 4 && ints[4] == 3 && ints[7] == MPI_ORDER_C && got[0] == MPI_INT, "subarray contents");

    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_set_name(v, "column"));
    OK(MPI_Type_get_name(v, name, &len));
    CHECK(strcmp(name, "column") == 0 && len == 6, "type name %s", name);
    OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "predefined name %s", name);

    /* attributes: copied by Type_dup (MPI_TYPE_DUP_FN), deleted by Type_free */
    int key, *val, flag;
    static int deleted;
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &key, &deleted));
    OK(MPI_Type_set_attr(v, key, &ints[5]));
    MPI_Datatype vd;
    OK(MPI_Type_dup(v, &vd));
    OK(MPI_Type_get_attr(vd, key, &val, &flag));
    CHECK(flag && val == &ints[5], "Type_dup copies the attribute");
    OK(MPI_Type_free(&vd));
    CHECK(deleted == 1, "Type_free deletes the attribute: %d", deleted);
    OK(MPI_Type_delete_attr(v, key));
    CHECK(deleted == 2, "Type_delete_attr: %d", deleted);
    OK(MPI_Type_get_attr(v, key, &val, &flag));
    CHECK(!flag, "no attribute after Type_delete_attr");
    OK(MPI_Type_free_keyval(&key));

    MPI_Aint a1, a2;
    OK(MPI_Get_address(&ints[0], &a1));
    OK(MPI_Get_address(&ints[3], &a2));
    CHECK(MPI_Aint_diff(a2, a1) == 3 * (MPI_Aint)sizeof(int), "Get_address and Aint_diff");

    OK(MPI_Type_free(&sa));
    OK(MPI_Type_free(&d));
    OK(MPI_Type_free(&r));
    OK(MPI_Type_free(&s));
    OK(MPI_Type_free(&v));
}

#define ROWS 4
#define COLS 5

static void fill(double m[ROWS][COLS], double base)
{
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            m[i][j] = base + i * COLS + j;
}

/* point-to-point between ranks 0 and 1 with a column of a matrix */
static void p2p(void)
{
    double m[ROWS][COLS], col[ROWS];
    MPI_Datatype column;
    MPI_Status st;
    int n, peer = 1 - rank;
    OK(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column));
    OK(MPI_Type_commit(&column));
    if (rank > 1)
        goto done;

    /* blocking: rank 0 sends column 2, rank 1 gets it as 4 doubles */
    if (rank == 0) {
        fill(m, 0);
        OK(MPI_Send(&m[0][2], 1, column, 1, 1, MPI_COMM_WORLD));
        OK(MPI_Ssend(&m[0][3], 1, column, 1, 2, MPI_COMM_WORLD));
    } else {
        OK(MPI_Recv(col, ROWS, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &st));
        for (int i = 0; i < ROWS; i++)
            CHECK(col[i] == i * COLS + 2, "column 2 row %d: %g", i, col[i]);
        OK(MPI_Get_count(&st, column, &n));
        CHECK(n == 1, "count in columns %d", n);
        OK(MPI_Get_elements(&st, column, &n));
        CHECK(n == ROWS, "elements %d", n);
        /* receive with the column type into column 1 of a zeroed matrix */
        memset(m, 0, sizeof m);
        OK(MPI_Recv(&m[0][1], 1, column, 0, 2, MPI_COMM_WORLD, &st));
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++)
                CHECK(m[i][j] == (j == 1 ? i * COLS + 3 : 0), "received column at (%d,%d): %g", i, j, m[i][j]);
    }

    /* nonblocking both ways, synchronous too */
    MPI_Request rq[2];
    fill(m, 100 * rank);
    double got[ROWS][COLS];
    memset(got, 0, sizeof got);
    OK(MPI_Irecv(&got[0][4], 1, column, peer, 3, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Issend(&m[0][0], 1, column, peer, 3, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < ROWS; i++)
        CHECK(got[i][4] == 100 * peer + i * COLS, "Irecv column row %d: %g", i, got[i][4]);

    /* a staged send freed while active still goes out */
    OK(MPI_Issend(&m[0][2], 1, column, peer, 30, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Request_free(&rq[1]));
    CHECK(rq[1] == MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
    OK(MPI_Recv(col, ROWS, MPI_DOUBLE, peer, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(col[3] == 100 * peer + 3 * COLS + 2, "a freed Issend's column: %g", col[3]);

    /* persistent: two rounds with new data each time */
    MPI_Request ps[2];
    OK(MPI_Recv_init(&got[0][0], 1, column, peer, 4, MPI_COMM_WORLD, &ps[0]));
    OK(MPI_Ssend_init(&m[0][1], 1, column, peer, 4, MPI_COMM_WORLD, &ps[1]));
    for (int round = 0; round < 2; round++) {
        fill(m, 1000 * round + 10 * rank);
        OK(MPI_Startall(2, ps));
        OK(MPI_Waitall(2, ps, MPI_STATUSES_IGNORE));
        for (int i = 0; i < ROWS; i++)
            CHECK(got[i][0] == 1000 * round + 10 * peer + i * COLS + 1, "persistent round %d row %d: %g", round, i, got[i][0]);
    }
    OK(MPI_Request_free(&ps[0]));
    OK(MPI_Request_free(&ps[1]));
    MPI_Request sp;
    OK(MPI_Send_init(&m[0][2], 1, column, peer, 5, MPI_COMM_WORLD, &sp));
    OK(MPI_Start(&sp));
    OK(MPI_Recv(&got[0][2], 1, column, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&sp, MPI_STATUS_IGNORE));
    OK(MPI_Request_free(&sp));
    CHECK(got[3][2] == 1000 + 10 * peer + 3 * COLS + 2, "Send_init column");

    /* Sendrecv and Sendrecv_replace with the column type */
    fill(m, 10 * rank);
    OK(MPI_Sendrecv(&m[0][1], 1, column, peer, 6, col, ROWS, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD, &st));
    CHECK(col[2] == 10 * peer + 2 * COLS + 1, "Sendrecv");
    OK(MPI_Sendrecv_replace(&m[0][3], 1, column, peer, 7, peer, 7, MPI_COMM_WORLD, &st));
    CHECK(m[1][3] == 10 * peer + COLS + 3 && m[1][2] == 10 * rank + COLS + 2, "Sendrecv_replace");

    /* probe, matched probe and partial elements */
    if (rank == 0) {
        int five[5] = {1, 2, 3, 4, 5};
        OK(MPI_Send(five, 5, MPI_INT, 1, 8, MPI_COMM_WORLD));
        OK(MPI_Send(five, 5, MPI_INT, 1, 9, MPI_COMM_WORLD));
        OK(MPI_Send(five, 4, MPI_INT, 1, 10, MPI_COMM_WORLD));
    } else {
        MPI_Datatype pair;
        int r[6] = {0};
        OK(MPI_Type_contiguous(2, MPI_INT, &pair));
        OK(MPI_Type_commit(&pair));
        OK(MPI_Probe(0, 8, MPI_COMM_WORLD, &st));
        OK(MPI_Get_count(&st, pair, &n));
        CHECK(n == MPI_UNDEFINED, "5 ints are not whole pairs: %d", n);
        OK(MPI_Get_elements(&st, pair, &n));
        CHECK(n == 5, "5 ints are 5 elements: %d", n);
        OK(MPI_Recv(r, 3, pair, 0, 8, MPI_COMM_WORLD, &st));
        CHECK(r[4] == 5 && r[5] == 0, "partial pair received");
        MPI_Message msg;
        OK(MPI_Mprobe(0, 9, MPI_COMM_WORLD, &msg, &st));
        OK(MPI_Mrecv(&got[0][0], 5, MPI_INT, &msg, &st)); /* predefined path still */
        MPI_Datatype strided;
        int w[12] = {0};
        OK(MPI_Type_vector(4, 1, 3, MPI_INT, &strided));
        OK(MPI_Type_commit(&strided));
        MPI_Request ir;
        OK(MPI_Mprobe(0, 10, MPI_COMM_WORLD, &msg, &st));
        OK(MPI_Imrecv(w, 1, strided, &msg, &ir));
        OK(MPI_Wait(&ir, &st));
        CHECK(w[0] == 1 && w[3] == 2 && w[6] == 3 && w[9] == 4 && w[1] == 0, "Imrecv strided");
        OK(MPI_Type_free(&strided));
        OK(MPI_Type_free(&pair));
    }

    /* a struct with gaps, to a zeroed array */
    struct rec {
        char c;
        double d;
        short s;
    } recs[3], back[3];
    MPI_Datatype rt;
    OK(MPI_Type_create_struct(3, (int[]){1, 1, 1},
                              (MPI_Aint[]){offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, s)},
                              (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_SHORT}, &rt));
    OK(MPI_Type_commit(&rt));
    for (int i = 0; i < 3; i++)
        recs[i] = (struct rec){(char)('x' + i), i + 0.25 + rank, (short)(i * 100 + rank)};
    memset(back, 0x5a, sizeof back);
    OK(MPI_Sendrecv(recs, 3, rt, peer, 11, back, 3, rt, peer, 11, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 3; i++) {
        CHECK(back[i].c == 'x' + i && back[i].d == i + 0.25 + peer && back[i].s == i * 100 + peer, "struct %d", i);
        CHECK(((unsigned char *)&back[i])[1] == 0x5a, "the gap after the char is not written");
    }
    OK(MPI_Type_free(&rt));

    /* absolute addresses from MPI_BOTTOM */
    int ia = 10 + rank, ib = 20 + rank, ra = 0, rb = 0;
    MPI_Aint aa, ab, raa, rab;
    MPI_Datatype abs_s, abs_r;
    OK(MPI_Get_address(&ia, &aa));
    OK(MPI_Get_address(&ib, &ab));
    OK(MPI_Get_address(&ra, &raa));
    OK(MPI_Get_address(&rb, &rab));
    OK(MPI_Type_create_hindexed(2, (int[]){1, 1}, (MPI_Aint[]){aa, ab}, MPI_INT, &abs_s));
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){rab, raa}, (MPI_Datatype[]){MPI_INT, MPI_INT}, &abs_r));
    OK(MPI_Type_commit(&abs_s));
    OK(MPI_Type_commit(&abs_r));
    OK(MPI_Sendrecv(MPI_BOTTOM, 1, abs_s, peer, 12, MPI_BOTTOM, 1, abs_r, peer, 12, MPI_COMM_WORLD, &st));
    CHECK(rb == 10 + peer && ra == 20 + peer, "MPI_BOTTOM: %d %d", ra, rb);
    OK(MPI_Type_free(&abs_s));
    OK(MPI_Type_free(&abs_r));

    /* a negative lower bound in communication */
    MPI_Datatype neg;
    int src[8] = {0, 1, 2, 3, 4, 5, 6, 7}, dst[8] = {0};
    OK(MPI_Type_create_hindexed(2, (int[]){1, 1}, (MPI_Aint[]){-3 * (MPI_Aint)sizeof(int), 0}, MPI_INT, &neg));
    OK(MPI_Type_commit(&neg));
    OK(MPI_Sendrecv(&src[5], 1, neg, peer, 13, &dst[4], 1, neg, peer, 13, MPI_COMM_WORLD, &st));
    CHECK(dst[1] == 2 && dst[4] == 5 && dst[0] == 0 && dst[2] == 0, "negative lb: %d %d", dst[1], dst[4]);
    OK(MPI_Type_free(&neg));

    /* zero-count and empty types move nothing and complete */
    MPI_Datatype empty;
    OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    OK(MPI_Type_commit(&empty));
    OK(MPI_Sendrecv(src, 3, empty, peer, 14, dst, 3, empty, peer, 14, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, empty, &n));
    CHECK(n == 0, "empty type count %d", n);
    OK(MPI_Sendrecv(src, 0, column, peer, 15, dst, 0, column, peer, 15, MPI_COMM_WORLD, &st));
    OK(MPI_Type_free(&empty));

    /* freeing a committed type while an Isend and an Irecv with it are pending */
    MPI_Datatype tmp;
    OK(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &tmp));
    OK(MPI_Type_commit(&tmp));
    fill(m, 50 + rank);
    memset(got, 0, sizeof got);
    OK(MPI_Irecv(&got[0][3], 1, tmp, peer, 16, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isend(&m[0][3], 1, tmp, peer, 16, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Type_free(&tmp));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < ROWS; i++)
        CHECK(got[i][3] == 50 + peer + i * COLS + 3, "after Type_free: row %d %g", i, got[i][3]);
done:
    OK(MPI_Type_free(&column));
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int sz;
    MPI_Type_size(*dt, &sz);
    int n = *len * sz / (int)sizeof(double);
    for (int i = 0; i < n; i++)
        ((double *)inout)[i] += ((double *)in)[i];
}

/* gap_fn sums the doubles of vector(3, 1, 2, MPI_DOUBLE) elements in place */
static void gap_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int e = 0; e < *len; e++)
        for (int i = 0; i < 3; i++)
            ((double *)inout)[e * 5 + 2 * i] += ((double *)in)[e * 5 + 2 * i];
}

static void collectives(void)
{
    const int R = 4;
    int m[4][16], col[4], back[4][16];
    MPI_Datatype vcol, column;
    /* column j of a 4 x size matrix, resized so column j+1 follows */
    OK(MPI_Type_vector(R, 1, size, MPI_INT, &vcol));
    OK(MPI_Type_create_resized(vcol, 0, sizeof(int), &column));
    OK(MPI_Type_commit(&column));
    int *mat = &m[0][0], *bk = &back[0][0];
    /* m is used as a R x size matrix in its first R*size ints */
    for (int i = 0; i < R; i++)
        for (int j = 0; j < size; j++)
            mat[i * size + j] = rank == 0 ? i * 100 + j : -1;
    OK(MPI_Scatter(mat, 1, column, col, R, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < R; i++)
        CHECK(col[i] == i * 100 + rank, "scattered column row %d: %d", i, col[i]);
    for (int i = 0; i < R; i++)
        col[i] += 1;
    memset(back, 0, sizeof back);
    OK(MPI_Gather(col, R, MPI_INT, bk, 1, column, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int i = 0; i < R; i++)
            for (int j = 0; j < size; j++)
                CHECK(bk[i * size + j] == i * 100 + j + 1, "gathered (%d,%d): %d", i, j, bk[i * size + j]);
    /* allgather of columns into every rank, nonblocking */
    MPI_Request rq;
    memset(back, 0, sizeof back);
    OK(MPI_Iallgather(col, R, MPI_INT, bk, 1, column, MPI_COMM_WORLD, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < R; i++)
        for (int j = 0; j < size; j++)
            CHECK(bk[i * size + j] == i * 100 + j + 1, "allgathered (%d,%d): %d", i, j, bk[i * size + j]);
    /* gatherv of columns, persistent, two rounds */
    int counts[16], displs[16];
    for (int j = 0; j < size; j++)
        counts[j] = 1, displs[j] = size - 1 - j; /* reversed */
    MPI_Request pr;
    OK(MPI_Gatherv_init(col, R, MPI_INT, bk, counts, displs, column, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < R; i++)
            col[i] = round * 1000 + i * 100 + rank;
        OK(MPI_Start(&pr));
        OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        if (rank == 0)
            for (int i = 0; i < R; i++)
                for (int j = 0; j < size; j++)
                    CHECK(bk[i * size + (size - 1 - j)] == round * 1000 + i * 100 + j, "gatherv round %d (%d,%d)", round, i, j);
    }
    OK(MPI_Request_free(&pr));
    /* bcast of a column */
    for (int i = 0; i < R; i++)
        for (int j = 0; j < size; j++)
            mat[i * size + j] = rank == 0 ? i : -1;
    OK(MPI_Bcast(mat + size - 1, 1, column, 0, MPI_COMM_WORLD));
    for (int i = 0; i < R; i++)
        CHECK(mat[i * size + size - 1] == i && (size == 1 || rank == 0 || mat[i * size] == -1), "bcast column row %d", i);

    /* reductions on contiguous(3, MPI_DOUBLE) */
    MPI_Datatype triple;
    OK(MPI_Type_contiguous(3, MPI_DOUBLE, &triple));
    OK(MPI_Type_commit(&triple));
    double in[6], out[6];
    for (int i = 0; i < 6; i++)
        in[i] = rank + i;
    OK(MPI_Allreduce(in, out, 2, triple, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 6; i++)
        CHECK(out[i] == size * (size - 1) / 2.0 + size * i, "allreduce triple %d: %g", i, out[i]);
    OK(MPI_Reduce(in, out, 2, triple, MPI_MAX, 0, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(out[5] == size - 1 + 5, "reduce max triple");
    memcpy(out, in, sizeof in);
    OK(MPI_Iallreduce(MPI_IN_PLACE, out, 2, triple, MPI_SUM, MPI_COMM_WORLD, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(out[4] == size * (size - 1) / 2.0 + size * 4, "in-place iallreduce triple");
    MPI_Op op;
    OK(MPI_Op_create(sum_fn, 1, &op));
    OK(MPI_Allreduce(in, out, 2, triple, op, MPI_COMM_WORLD));
    for (int i = 0; i < 6; i++)
        CHECK(out[i] == size * (size - 1) / 2.0 + size * i, "user op on triple %d: %g", i, out[i]);
    /* and on a type with gaps: every other double, the function sees the layout */
    MPI_Datatype gapped;
    OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &gapped));
    OK(MPI_Op_create(gap_fn, 1, &op));
    OK(MPI_Type_commit(&gapped));
    double gin[6], gout[6];
    for (int i = 0; i < 6; i++)
        gin[i] = rank + i, gout[i] = -1;
    OK(MPI_Allreduce(gin, gout, 1, gapped, op, MPI_COMM_WORLD));
    for (int i = 0; i < 5; i++)
        CHECK(gout[i] == (i % 2 ? -1 : size * (size - 1) / 2.0 + size * i), "user op on a gapped type [%d]: %g", i, gout[i]);
    OK(MPI_Type_free(&gapped));
    OK(MPI_Op_free(&op));
    /* a reduction on a type of mixed basic elements is an error */
    MPI_Datatype mixed;
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &mixed));
    OK(MPI_Type_commit(&mixed));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int err = MPI_Allreduce(in, out, 1, mixed, MPI_SUM, MPI_COMM_WORLD), cls;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TYPE, "reduction on a mixed struct: class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Type_free(&mixed));

    /* Alltoallw: rank j gets column j of every rank's R x size matrix as R ints */
    int sc[16], sd[16], rc[16], rd[16];
    MPI_Datatype stypes[16], rtypes[16];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < size; j++)
            mat[i * size + j] = rank * 1000 + i * 10 + j;
    for (int j = 0; j < size; j++) {
        sc[j] = 1, sd[j] = j * sizeof(int), stypes[j] = column;
        rc[j] = R, rd[j] = j * R * sizeof(int), rtypes[j] = MPI_INT;
    }
    OK(MPI_Alltoallw(mat, sc, sd, stypes, bk, rc, rd, rtypes, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < R; i++)
            CHECK(bk[j * R + i] == j * 1000 + i * 10 + rank, "alltoallw from %d row %d: %d", j, i, bk[j * R + i]);

    OK(MPI_Type_free(&triple));
    OK(MPI_Type_free(&column));
    OK(MPI_Type_free(&vcol));
}

/* more collectives and calls on derived types: v-forms, in place,
 * reduce_scatter_block, buffered and matched receives, external32 */
static void more(void)
{
    MPI_Datatype pair, column;
    MPI_Request rq;
    int sbuf[64], rbuf[64];
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    /* alltoallv of pairs: rank r sends r+1 ints... as (j+1) pairs to rank j */
    int sc[16], sd[16], rc[16], rd[16], at = 0;
    for (int j = 0; j < size; j++) {
        sc[j] = j + 1, sd[j] = at;
        for (int k = 0; k < 2 * (j + 1); k++)
            sbuf[2 * at + k] = rank * 100 + j * 10 + k;
        at += j + 1;
    }
    at = 0;
    for (int j = 0; j < size; j++) /* receive 2*(rank+1) ints from each */
        rc[j] = 2 * (rank + 1), rd[j] = at, at += 2 * (rank + 1);
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_Ialltoallv(sbuf, sc, sd, pair, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int j = 0; j < size; j++)
        for (int k = 0; k < 2 * (rank + 1); k++)
            CHECK(rbuf[rd[j] + k] == j * 100 + rank * 10 + k, "alltoallv from %d [%d]: %d", j, k, rbuf[rd[j] + k]);
    /* scatterv of pairs, receive in place at the root */
    for (int j = 0; j < size; j++)
        sc[j] = 1, sd[j] = size - 1 - j;
    for (int k = 0; k < 2 * size; k++)
        sbuf[k] = k;
    int two[2] = {-1, -1};
    OK(MPI_Scatterv(sbuf, sc, sd, pair, rank == 0 ? MPI_IN_PLACE : two, 2, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank != 0)
        CHECK(two[0] == 2 * (size - 1 - rank) && two[1] == two[0] + 1, "scatterv pair: %d %d", two[0], two[1]);
    /* gather in place at the root with a derived receive type */
    for (int k = 0; k < 2 * size; k++)
        rbuf[k] = rank == 0 ? (k < 2 ? 7 : -1) : -1;
    two[0] = rank, two[1] = rank * rank;
    OK(MPI_Gather(rank == 0 ? MPI_IN_PLACE : two, 2, MPI_INT, rbuf, 1, pair, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(rbuf[0] == 7 && rbuf[1] == 7, "in-place gather keeps the root's pair");
        for (int j = 1; j < size; j++)
            CHECK(rbuf[2 * j] == j && rbuf[2 * j + 1] == j * j, "in-place gather from %d", j);
    }
    /* reduce_scatter_block on pairs, persistent */
    for (int k = 0; k < 2 * size; k++)
        sbuf[k] = k + rank;
    OK(MPI_Reduce_scatter_block_init(sbuf, two, 1, pair, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
    OK(MPI_Start(&rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    OK(MPI_Request_free(&rq));
    int s0 = size * (size - 1) / 2;
    CHECK(two[0] == size * 2 * rank + s0 && two[1] == size * (2 * rank + 1) + s0, "reduce_scatter_block pair: %d %d", two[0], two[1]);
    /* an exclusive scan and a local reduction on pairs */
    two[0] = 1, two[1] = rank;
    int ex[2] = {-5, -5};
    OK(MPI_Exscan(two, ex, 1, pair, MPI_SUM, MPI_COMM_WORLD));
    if (rank > 0)
        CHECK(ex[0] == rank && ex[1] == rank * (rank - 1) / 2, "exscan pair: %d %d", ex[0], ex[1]);
    int acc[2] = {10, 20};
    OK(MPI_Reduce_local(two, acc, 1, pair, MPI_SUM));
    CHECK(acc[0] == 11 && acc[1] == 20 + rank, "reduce_local pair");

    /* buffered sends and matched receives of a strided column */
    OK(MPI_Type_vector(3, 1, 4, MPI_INT, &column));
    OK(MPI_Type_commit(&column));
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank, bsz;
        char *bb;
        OK(MPI_Pack_size(1, column, MPI_COMM_WORLD, &bsz));
        bsz += MPI_BSEND_OVERHEAD;
        bb = malloc(bsz);
        OK(MPI_Buffer_attach(bb, bsz));
        for (int k = 0; k < 12; k++)
            sbuf[k] = 100 * rank + k;
        OK(MPI_Bsend(sbuf + 1, 1, column, peer, 20, MPI_COMM_WORLD));
        MPI_Message msg;
        MPI_Status st;
        memset(rbuf, 0, 12 * sizeof(int));
        OK(MPI_Mprobe(peer, 20, MPI_COMM_WORLD, &msg, &st));
        OK(MPI_Mrecv(rbuf + 2, 1, column, &msg, &st));
        CHECK(rbuf[2] == 100 * peer + 1 && rbuf[6] == 100 * peer + 5 && rbuf[10] == 100 * peer + 9 && rbuf[3] == 0,
              "Bsend/Mrecv column");
        void *ba;
        OK(MPI_Buffer_detach(&ba, &bsz));
        free(bb);
    }

    /* external32: big-endian, MPI_LONG in 4 bytes */
    long lv[3] = {-2, 3, 1L << 20};
    unsigned char ext[64];
    MPI_Aint esz, epos = 0;
    OK(MPI_Pack_external_size("external32", 3, MPI_LONG, &esz));
    CHECK(esz == 12, "external32 size of 3 longs: %ld", (long)esz);
    OK(MPI_Pack_external("external32", lv, 3, MPI_LONG, ext, sizeof ext, &epos));
    CHECK(epos == 12 && ext[0] == 0xff && ext[3] == 0xfe && ext[7] == 3 && ext[9] == 0x10, "external32 bytes");
    long lb[3] = {0};
    epos = 0;
    OK(MPI_Unpack_external("external32", ext, 12, &epos, lb, 3, MPI_LONG));
    CHECK(lb[0] == -2 && lb[1] == 3 && lb[2] == 1L << 20, "external32 round trip");
    int iv[12];
    for (int k = 0; k < 12; k++)
        iv[k] = k;
    epos = 0;
    OK(MPI_Pack_external("external32", iv, 1, column, ext, sizeof ext, &epos));
    CHECK(epos == 12 && ext[3] == 0 && ext[7] == 4 && ext[11] == 8, "external32 of a column");
    MPI_Datatype m;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(double), &m));
    int msz;
    OK(MPI_Type_size(m, &msz));
    CHECK(msz == sizeof(double), "Type_match_size");

    OK(MPI_Type_free(&column));
    OK(MPI_Type_free(&pair));
}

static void errors(void)
{
    MPI_Datatype t;
    int x[4] = {0}, err, cls;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
#define EXPECT(want, call)                                                  \
    do {                                                                    \
        err = (call);                                                       \
        MPI_Error_class(err, &cls);                                         \
        CHECK(err != MPI_SUCCESS && cls == (want), "%s: class %d", #call, cls); \
    } while (0)
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    EXPECT(MPI_ERR_TYPE, MPI_Send(x, 1, t, rank, 0, MPI_COMM_WORLD)); /* not committed */
    EXPECT(MPI_ERR_TYPE, MPI_Bcast(x, 1, t, 0, MPI_COMM_WORLD));
    int pos = 0;
    EXPECT(MPI_ERR_TYPE, MPI_Pack(x, 1, t, x, sizeof x, &pos, MPI_COMM_WORLD));
    OK(MPI_Type_commit(&t));
    EXPECT(MPI_ERR_BUFFER, MPI_Send(NULL, 1, t, rank, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, MPI_Bcast(NULL, 1, t, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, MPI_Pack(NULL, 1, t, x, sizeof x, &pos, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TRUNCATE, MPI_Pack(x, 3, t, x, sizeof x, &pos, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COUNT, MPI_Send(x, -1, t, rank, 0, MPI_COMM_WORLD));
    MPI_Datatype u;
    EXPECT(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &u));
    EXPECT(MPI_ERR_COUNT, MPI_Type_vector(2, -1, 2, MPI_INT, &u));
    EXPECT(MPI_ERR_TYPE, MPI_Type_vector(2, 1, 2, MPI_DATATYPE_NULL, &u));
    EXPECT(MPI_ERR_TYPE, MPI_Type_contiguous(2, (MPI_Datatype)0x6123456, &u));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(1, (int[]){4}, (int[]){3}, (int[]){2}, MPI_ORDER_C, MPI_INT, &u));
    OK(MPI_Type_create_resized(MPI_INT, 0, -4, &u)); /* a negative extent is MPI's (mpich4.c) */
    OK(MPI_Type_free(&u));
    EXPECT(MPI_ERR_TYPE, MPI_Type_free(&(MPI_Datatype){MPI_INT}));
    EXPECT(MPI_ERR_TYPE, MPI_Send(x, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Type_commit(&(MPI_Datatype){MPI_DATATYPE_NULL}));
    MPI_Datatype dead = t;
    OK(MPI_Type_free(&t));
    EXPECT(MPI_ERR_TYPE, MPI_Type_free(&dead)); /* freed twice */
    EXPECT(MPI_ERR_TYPE, MPI_Send(x, 1, dead, rank, 0, MPI_COMM_WORLD));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;
    constructors();
    contents();
    errors();
    if (size >= 2)
        p2p();
    if (size <= 16) {
        collectives();
        more();
    }
    OK(MPI_Finalize());
    if (rank == 0)
        printf("types ok on %d ranks\n", size);
    return 0;
}
