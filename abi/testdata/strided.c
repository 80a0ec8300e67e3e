/* strided.c: types past the binding's 16M flattened runs (abi/strided.go):
 * a vector of 16M+ single bytes sent rank to rank in every point-to-point
 * form, and a vector of 16M+ blocks of four ints asked its size, extent
 * and elements, as MPICH's large_count asks one of INT_MAX/2 (not here:
 * the Go type's constructor visits every block, seconds under load). Prints "strided ok" on rank 0. */
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <mpi.h>
#include "check.h"

#define BLOCKS ((1 << 24) + 5)
#define BIG ((1LL << 24) + 3)

static void fill(unsigned char *b, int64_t n) { memset(b, 0xee, n); }

/* every even byte of the vector as the sender filled it; odd ones untouched */
static void expect(const unsigned char *b, int from) {
    for (int64_t i = 0; i < 2 * (int64_t)BLOCKS; i++) {
        unsigned char want = (i % 2 == 0 && i < 2 * (int64_t)BLOCKS - 1) ? (unsigned char)(i / 2 % 253 + from + 1) : 0xee;
        CHECK(b[i] == want, "byte %lld from %d: %#x, want %#x", (long long)i, from, b[i], want);
    }
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* large_count's kind of vector: never flattened, answered from its levels */
    MPI_Datatype four, big, rsz;
    OK(MPI_Type_contiguous(4, MPI_INT, &four));
    OK(MPI_Type_vector(BIG, 1, 3, four, &big));
    OK(MPI_Type_commit(&big));
    OK(MPI_Type_create_resized(big, INT_MAX, -1024, &rsz));
    OK(MPI_Type_commit(&rsz));
    MPI_Count sz, lb, ext, n;
    int isz;
    OK(MPI_Type_size_x(big, &sz));
    CHECK(sz == 16 * BIG, "size %lld", (long long)sz);
    OK(MPI_Type_size(big, &isz));
    CHECK(isz == 16 * BIG, "MPI_Type_size %d", isz);
    OK(MPI_Type_get_extent_x(big, &lb, &ext));
    CHECK(lb == 0 && ext == 48 * (BIG - 1) + 16, "lb %lld extent %lld", (long long)lb, (long long)ext);
    MPI_Status st;
    MPI_Datatype ts[2] = {big, rsz};
    for (int i = 0; i < 2; i++) {
        OK(MPI_Status_set_elements_x(&st, ts[i], 4 * BIG));
        OK(MPI_Get_elements_x(&st, ts[i], &n));
        CHECK(n == 4 * BIG, "type %d: %lld elements", i, (long long)n);
        int c;
        OK(MPI_Get_count(&st, ts[i], &c));
        CHECK(c == 1, "type %d: count %d", i, c);
        OK(MPI_Status_set_elements_x(&st, ts[i], 7));
        OK(MPI_Get_elements_x(&st, ts[i], &n));
        CHECK(n == 7, "type %d: %lld elements of 7", i, (long long)n);
    }

    /* a vector of 16M+ bytes, every other one, around a ring */
    MPI_Datatype v;
    OK(MPI_Type_vector(BLOCKS, 1, 2, MPI_CHAR, &v));
    OK(MPI_Type_commit(&v));
    int64_t len = 2 * (int64_t)BLOCKS;
    unsigned char *src = malloc(len), *dst = malloc(len);
    CHECK(src && dst, "malloc");
    for (int64_t i = 0; i < len; i++)
        src[i] = (unsigned char)(i / 2 % 253 + rank + 1);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Request rq[2];

    fill(dst, len); /* Sendrecv */
    OK(MPI_Sendrecv(src, 1, v, next, 1, dst, 1, v, prev, 1, MPI_COMM_WORLD, &st));
    OK(MPI_Get_elements_x(&st, v, &n));
    CHECK(n == BLOCKS, "%lld elements received", (long long)n);
    expect(dst, prev);

    fill(dst, len); /* Irecv and Isend */
    OK(MPI_Irecv(dst, 1, v, prev, 2, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isend(src, 1, v, next, 2, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    expect(dst, prev);

    fill(dst, len); /* persistent, started twice */
    OK(MPI_Recv_init(dst, 1, v, prev, 3, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Send_init(src, 1, v, next, 3, MPI_COMM_WORLD, &rq[1]));
    for (int k = 0; k < 2; k++) {
        OK(MPI_Startall(2, rq));
        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        expect(dst, prev);
        fill(dst, len);
    }
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Request_free(&rq[1]));

    fill(dst, len); /* Bcast from rank 0, staged as the collectives are */
    OK(MPI_Bcast(rank == 0 ? src : dst, 1, v, 0, MPI_COMM_WORLD));
    if (rank != 0)
        expect(dst, 0);

    /* the w-forms take the Go type, which a strided type has not */
    int cs[64], ds[64];
    MPI_Datatype ws[64];
    for (int i = 0; i < size && i < 64; i++)
        cs[i] = 1, ds[i] = 0, ws[i] = v;
    int rc = MPI_Alltoallw(src, cs, ds, ws, dst, cs, ds, ws, MPI_COMM_WORLD);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Alltoallw: class %d", cls);

    free(src);
    free(dst);
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&big));
    OK(MPI_Type_free(&rsz));
    OK(MPI_Type_free(&four));
    if (rank == 0)
        printf("strided ok\n");
    OK(MPI_Finalize());
    return 0;
}
