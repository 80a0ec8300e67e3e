/* mpich4.c: the cases of issue 19's fourth round that MPICH's datatype
 * tests (test/mpi/datatype) found wrong or missing: the calls MPI-3.0
 * removed (the *_oldapi tests; removed.c), negative extents (lbub,
 * large_count), the pair types' MPI size and typemap (pairtype_size_extent,
 * get_elements_pairtype), long double's C alignment (pairtype_size_extent)
 * and the names of the aliased handles (typename). Run on 1 to 4 ranks;
 * prints "mpich4 ok" at rank 0. */
#include <mpi.h>
#include <stddef.h>
#include <string.h>
#include "check.h"

static int rank, size;

/* OK with the error's message */
#undef OK
#define OK(call)                                                                  \
    do {                                                                          \
        int err_ = (call), len_;                                                  \
        char msg_[MPI_MAX_ERROR_STRING] = "";                                     \
        if (err_ != MPI_SUCCESS)                                                  \
            MPI_Error_string(err_, msg_, &len_);                                  \
        CHECK(err_ == MPI_SUCCESS, "%s: %s", #call, msg_);                        \
    } while (0)

/* removed in MPI-3.0, not in the standard ABI's header; the library keeps
 * them (removed.c) for MPI-1 programs such as MPICH's *_oldapi tests */
int MPI_Address(void *location, MPI_Aint *address);
int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent);
int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement);
int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement);
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype);
int MPI_Type_hindexed(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                      MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_struct(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                    MPI_Datatype *array_of_types, MPI_Datatype *newtype);

static void removed(void)
{
    int a[8], bl[2] = { 1, 2 };
    MPI_Aint x, lb, ub, d[2] = { -8, 4 };
    MPI_Datatype t, types[2] = { MPI_INT, MPI_DOUBLE };
    int comb, ni, na, nd;

    OK(MPI_Address(&a[3], &x));
    CHECK(x == (MPI_Aint)&a[3], "MPI_Address %ld", (long)x);
    OK(MPI_Type_extent(MPI_DOUBLE, &x));
    CHECK(x == 8, "MPI_Type_extent(MPI_DOUBLE) %ld", (long)x);

    /* hvector: 3 blocks of 2 ints, 12 bytes apart: lb 0, ub 32 */
    OK(MPI_Type_hvector(3, 2, 12, MPI_INT, &t));
    OK(MPI_Type_lb(t, &lb));
    OK(MPI_Type_ub(t, &ub));
    OK(MPI_Type_extent(t, &x));
    CHECK(lb == 0 && ub == 32 && x == 32, "hvector lb %ld ub %ld extent %ld", (long)lb, (long)ub, (long)x);
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_HVECTOR, "hvector combiner %d", comb);
    OK(MPI_Type_free(&t));

    /* hindexed from a negative displacement: lb -8 */
    OK(MPI_Type_hindexed(2, bl, d, MPI_INT, &t));
    OK(MPI_Type_lb(t, &lb));
    OK(MPI_Type_ub(t, &ub));
    CHECK(lb == -8 && ub == 12, "hindexed lb %ld ub %ld", (long)lb, (long)ub);
    OK(MPI_Type_free(&t));

    /* struct {int at -8; 2 doubles at 4}: lb -8, data to 20, aligned to 8 */
    OK(MPI_Type_struct(2, bl, d, types, &t));
    OK(MPI_Type_lb(t, &lb));
    OK(MPI_Type_ub(t, &ub));
    CHECK(lb == -8 && ub == 24, "struct lb %ld ub %ld", (long)lb, (long)ub);
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT, "struct combiner %d", comb);
    OK(MPI_Type_free(&t));

    /* errors still go through the handler */
    CHECK(MPI_Type_extent(MPI_DATATYPE_NULL, &x) != MPI_SUCCESS, "MPI_Type_extent(MPI_DATATYPE_NULL) succeeded");
}

/* negative extents: consecutive elements at decreasing addresses */
static void negative_extent(void)
{
    int a[6] = { 0, 1, 2, 3, 4, 5 }, b[6], packed[6], i, pos, n;
    MPI_Datatype back, vec;
    MPI_Aint lb, x, tlb, tx;
    MPI_Status st;

    OK(MPI_Type_create_resized(MPI_INT, 0, -4, &back));
    OK(MPI_Type_commit(&back));
    OK(MPI_Type_get_extent(back, &lb, &x));
    OK(MPI_Type_get_true_extent(back, &tlb, &tx));
    CHECK(lb == 0 && x == -4 && tlb == 0 && tx == 4, "resized lb %ld extent %ld true %ld %ld", (long)lb, (long)x,
          (long)tlb, (long)tx);

    /* 6 elements from &a[5] are a[5], a[4] … a[0] */
    pos = 0;
    OK(MPI_Pack(&a[5], 6, back, packed, sizeof packed, &pos, MPI_COMM_SELF));
    CHECK(pos == 24, "packed %d bytes", pos);
    for (i = 0; i < 6; i++)
        CHECK(packed[i] == 5 - i, "packed[%d] = %d", i, packed[i]);
    memset(b, -1, sizeof b);
    pos = 0;
    OK(MPI_Unpack(packed, sizeof packed, &pos, &b[5], 6, back, MPI_COMM_SELF));
    for (i = 0; i < 6; i++)
        CHECK(b[i] == i, "unpacked b[%d] = %d", i, b[i]);

    /* point-to-point: reversed on the way out, in order on the way in */
    memset(b, -1, sizeof b);
    OK(MPI_Sendrecv(&a[5], 6, back, 0, 7, b, 6, MPI_INT, 0, 7, MPI_COMM_SELF, &st));
    OK(MPI_Get_count(&st, back, &n));
    CHECK(n == 6, "count %d", n);
    for (i = 0; i < 6; i++)
        CHECK(b[i] == 5 - i, "reversed b[%d] = %d", i, b[i]);
    memset(b, -1, sizeof b);
    OK(MPI_Sendrecv(a, 6, MPI_INT, 0, 7, &b[5], 6, back, 0, 7, MPI_COMM_SELF, &st));
    for (i = 0; i < 6; i++)
        CHECK(b[i] == 5 - i, "received reversed b[%d] = %d", i, b[i]);

    /* zero count: nothing moves, nothing is touched */
    memset(b, -1, sizeof b);
    OK(MPI_Sendrecv(&a[5], 0, back, 0, 8, &b[5], 0, back, 0, 8, MPI_COMM_SELF, &st));
    OK(MPI_Get_count(&st, back, &n));
    CHECK(n == 0 && b[0] == -1 && b[5] == -1, "zero count: count %d, b %d %d", n, b[0], b[5]);

    /* a vector of it: 2 blocks of 2, stride 3 (extents): a[5] a[4], a[2] a[1] */
    OK(MPI_Type_vector(2, 2, 3, back, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Type_get_extent(vec, &lb, &x));
    /* lb markers at the elements' origins 0, -4, -12, -16; ub markers 4 below them */
    CHECK(lb == -16 && x == 12, "vector of negative extent: lb %ld extent %ld", (long)lb, (long)x);
    pos = 0;
    OK(MPI_Pack(&a[5], 1, vec, packed, sizeof packed, &pos, MPI_COMM_SELF));
    CHECK(pos == 16 && packed[0] == 5 && packed[1] == 4 && packed[2] == 2 && packed[3] == 1,
          "vector packed %d bytes: %d %d %d %d", pos, packed[0], packed[1], packed[2], packed[3]);
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&back));
}

struct di {
    double d;
    int i;
};
struct si {
    short s;
    int i;
};
struct ldi {
    long double ld;
    int i;
};

static void size_extent(MPI_Datatype t, const char *name, int want_size, MPI_Aint want_extent)
{
    int s;
    MPI_Aint lb, x;
    OK(MPI_Type_size(t, &s));
    OK(MPI_Type_get_extent(t, &lb, &x));
    CHECK(s == want_size && lb == 0 && x == want_extent, "%s: size %d lb %ld extent %ld, want %d 0 %ld", name, s,
          (long)lb, (long)x, want_size, (long)want_extent);
}

/* the pair types: MPI's size, the C struct's extent, their typemap on the
 * wire */
static void pairs(void)
{
    struct {
        double a;
        int b;
        double c;
        int d;
    } foo = { 1.5, 7, -2.5, 9 };
    struct di bar[2], in[3], out[3];
    struct si sin[2], sout[2];
    int bl[4] = { 1, 1, 1, 1 }, n, pos, psize, other, flag;
    MPI_Aint d[4], tlb, tx;
    MPI_Datatype types[4] = { MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_INT }, stype, two;
    MPI_Status st;
    MPI_Request r;
    MPI_Message m;
    char buf[64];

    size_extent(MPI_FLOAT_INT, "MPI_FLOAT_INT", 8, 8);
    size_extent(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, 16);
    size_extent(MPI_LONG_INT, "MPI_LONG_INT", 12, 16);
    size_extent(MPI_2INT, "MPI_2INT", 8, 8);
    size_extent(MPI_SHORT_INT, "MPI_SHORT_INT", 6, 8);
    size_extent(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", (int)sizeof(long double) + 4, sizeof(struct ldi));
    OK(MPI_Type_get_true_extent(MPI_DOUBLE_INT, &tlb, &tx));
    CHECK(tlb == 0 && tx == 12, "MPI_DOUBLE_INT true extent %ld %ld", (long)tlb, (long)tx);

    /* a struct of the same signature matches two MPI_DOUBLE_INT */
    d[0] = 0;
    d[1] = offsetof(__typeof__(foo), b);
    d[2] = offsetof(__typeof__(foo), c);
    d[3] = offsetof(__typeof__(foo), d);
    OK(MPI_Type_create_struct(4, bl, d, types, &stype));
    OK(MPI_Type_commit(&stype));
    memset(bar, 0, sizeof bar);
    OK(MPI_Sendrecv(&foo, 1, stype, 0, 1, bar, 2, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF, &st));
    OK(MPI_Get_elements(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == 4, "MPI_Get_elements %d, want 4", n);
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == 2, "MPI_Get_count %d, want 2", n);
    CHECK(bar[0].d == 1.5 && bar[0].i == 7 && bar[1].d == -2.5 && bar[1].i == 9, "received %g %d %g %d", bar[0].d,
          bar[0].i, bar[1].d, bar[1].i);
    /* and the other way round */
    memset(&foo, 0, sizeof foo);
    OK(MPI_Sendrecv(bar, 2, MPI_DOUBLE_INT, 0, 1, &foo, 1, stype, 0, 1, MPI_COMM_SELF, &st));
    CHECK(foo.a == 1.5 && foo.b == 7 && foo.c == -2.5 && foo.d == 9, "struct received %g %d %g %d", foo.a, foo.b,
          foo.c, foo.d);
    /* 20 bytes: one pair and a double, no whole count; 3 basic elements */
    OK(MPI_Sendrecv(&foo.a, 5, MPI_INT, 0, 1, bar, 2, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == MPI_UNDEFINED, "count of 20 bytes in MPI_DOUBLE_INT: %d", n);
    OK(MPI_Get_elements(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == 3, "elements of 20 bytes in MPI_DOUBLE_INT: %d", n);
    OK(MPI_Type_free(&stype));

    /* pack: 12 bytes a pair */
    OK(MPI_Pack_size(2, MPI_DOUBLE_INT, MPI_COMM_SELF, &psize));
    CHECK(psize == 24, "MPI_Pack_size %d", psize);
    pos = 0;
    OK(MPI_Pack(bar, 2, MPI_DOUBLE_INT, buf, sizeof buf, &pos, MPI_COMM_SELF));
    CHECK(pos == 24, "packed %d bytes", pos);
    memset(in, 0, sizeof in);
    pos = 0;
    OK(MPI_Unpack(buf, sizeof buf, &pos, in, 2, MPI_DOUBLE_INT, MPI_COMM_SELF));
    CHECK(in[0].d == bar[0].d && in[1].i == bar[1].i, "unpacked %g %d", in[0].d, in[1].i);

    /* a contiguous type of pairs moves them as the pairs do */
    OK(MPI_Type_contiguous(2, MPI_SHORT_INT, &two));
    OK(MPI_Type_commit(&two));
    size_extent(two, "contiguous(2, MPI_SHORT_INT)", 12, 16);
    sin[0].s = 3, sin[0].i = 30, sin[1].s = -4, sin[1].i = 40;
    memset(sout, 0, sizeof sout);
    OK(MPI_Sendrecv(sin, 1, two, 0, 2, sout, 2, MPI_SHORT_INT, 0, 2, MPI_COMM_SELF, &st));
    OK(MPI_Get_elements(&st, two, &n));
    CHECK(n == 4 && sout[1].s == -4 && sout[1].i == 40, "elements %d, %d %d", n, sout[1].s, sout[1].i);
    OK(MPI_Type_free(&two));

    /* every point-to-point form, between ranks 0 and 1 or to itself */
    other = size > 1 ? rank ^ 1 : rank;
    if (other >= size)
        other = rank;
    for (n = 0; n < 3; n++)
        in[n].d = rank * 10 + n, in[n].i = rank;
    memset(out, 0, sizeof out);
    OK(MPI_Irecv(out, 3, MPI_DOUBLE_INT, other, 3, MPI_COMM_WORLD, &r));
    OK(MPI_Ssend(in, 3, MPI_DOUBLE_INT, other, 3, MPI_COMM_WORLD));
    OK(MPI_Wait(&r, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == 3 && out[2].d == other * 10 + 2 && out[2].i == other, "Ssend: %d, %g %d", n, out[2].d, out[2].i);

    memset(out, 0, sizeof out);
    OK(MPI_Issend(in, 3, MPI_DOUBLE_INT, other, 4, MPI_COMM_WORLD, &r));
    OK(MPI_Recv(out, 3, MPI_DOUBLE_INT, other, 4, MPI_COMM_WORLD, &st));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(out[1].d == other * 10 + 1, "Issend: %g", out[1].d);

    {
        MPI_Request rs[2];
        int k;
        OK(MPI_Ssend_init(in, 3, MPI_DOUBLE_INT, other, 5, MPI_COMM_WORLD, &rs[0]));
        OK(MPI_Recv_init(out, 3, MPI_DOUBLE_INT, other, 5, MPI_COMM_WORLD, &rs[1]));
        for (k = 0; k < 2; k++) {
            in[0].d = 100 * k + rank; /* each Start sends the buffer as it is */
            memset(out, 0, sizeof out);
            OK(MPI_Startall(2, rs));
            OK(MPI_Waitall(2, rs, MPI_STATUSES_IGNORE));
            CHECK(out[0].d == 100 * k + other && out[2].i == other, "Ssend_init round %d: %g %d", k, out[0].d,
                  out[2].i);
        }
        OK(MPI_Request_free(&rs[0]));
        OK(MPI_Request_free(&rs[1]));
    }

    in[0].d = rank;
    memcpy(out, in, sizeof out);
    OK(MPI_Sendrecv_replace(out, 3, MPI_DOUBLE_INT, other, 6, other, 6, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == 3 && out[0].d == other && out[2].i == other, "Sendrecv_replace: %d %g %d", n, out[0].d, out[2].i);

    memset(out, 0, sizeof out);
    OK(MPI_Isend(in, 2, MPI_DOUBLE_INT, other, 7, MPI_COMM_WORLD, &r));
    OK(MPI_Mprobe(other, 7, MPI_COMM_WORLD, &m, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == 2, "Mprobe count %d", n);
    OK(MPI_Mrecv(out, 2, MPI_DOUBLE_INT, &m, &st));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(out[1].d == other * 10 + 1 && out[1].i == other && out[2].d == 0, "Mrecv: %g %d %g", out[1].d,
          out[1].i, out[2].d);

    /* zero pairs */
    OK(MPI_Sendrecv(in, 0, MPI_DOUBLE_INT, other, 8, out, 0, MPI_DOUBLE_INT, other, 8, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &n));
    CHECK(n == 0, "zero pairs: count %d", n);

    /* MINLOC and MAXLOC still reduce the pairs */
    in[0].d = rank % 2 ? -rank : rank, in[0].i = rank;
    OK(MPI_Allreduce(in, out, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    {
        int k, at = 0;
        double least = 0;
        for (k = 0; k < size; k++)
            if ((k % 2 ? -k : k) < least)
                least = k % 2 ? -k : k, at = k;
        CHECK(out[0].d == least && out[0].i == at, "MINLOC %g %d, want %g %d", out[0].d, out[0].i, least, at);
    }
    sin[0].s = (short)rank, sin[0].i = rank;
    OK(MPI_Allreduce(sin, sout, 1, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(sout[0].s == size - 1 && sout[0].i == size - 1, "MAXLOC %d %d", sout[0].s, sout[0].i);
    flag = 0;
    OK(MPI_Allreduce(MPI_IN_PLACE, &flag, 0, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
}

/* long double: C's alignment in the structs MPI builds */
static void long_double(void)
{
    int bl[2] = { 1, 1 }, s;
    MPI_Aint d[2] = { 0, offsetof(struct ldi, i) }, lb, x;
    MPI_Datatype types[2] = { MPI_LONG_DOUBLE, MPI_INT }, t;
    long double v[2] = { 1.25L, -3.5L }, w[2] = { 0, 0 };
    MPI_Status st;

    OK(MPI_Type_size(MPI_LONG_DOUBLE, &s));
    CHECK(s == sizeof(long double), "MPI_LONG_DOUBLE size %d", s);
    OK(MPI_Type_create_struct(2, bl, d, types, &t));
    OK(MPI_Type_get_extent(t, &lb, &x));
    OK(MPI_Type_size(t, &s));
    CHECK(lb == 0 && x == sizeof(struct ldi) && s == (int)sizeof(long double) + 4,
          "struct {long double; int}: lb %ld extent %ld size %d", (long)lb, (long)x, s);
    OK(MPI_Type_free(&t));
    /* a derived type of long double moves its bytes */
    OK(MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &t));
    OK(MPI_Type_commit(&t));
    OK(MPI_Sendrecv(v, 1, t, 0, 9, w, 1, t, 0, 9, MPI_COMM_SELF, &st));
    CHECK(w[0] == 1.25L && w[1] == -3.5L, "long doubles %Lg %Lg", w[0], w[1]);
    OK(MPI_Type_free(&t));

    /* and so does long double itself, in point-to-point and collectives */
    {
        long double all[4 * 2], one[2] = { rank + 0.25L, -rank - 0.5L };
        long double _Complex z = rank + 2.0L * rank * 1.0iL, zs[4];
        int n, k, err, cls;
        w[0] = w[1] = 0;
        OK(MPI_Sendrecv(v, 2, MPI_LONG_DOUBLE, 0, 10, w, 2, MPI_LONG_DOUBLE, 0, 10, MPI_COMM_SELF, &st));
        OK(MPI_Get_count(&st, MPI_LONG_DOUBLE, &n));
        CHECK(n == 2 && w[0] == 1.25L && w[1] == -3.5L, "MPI_LONG_DOUBLE: count %d, %Lg %Lg", n, w[0], w[1]);
        w[0] = rank == 0 ? 7.75L : 0;
        OK(MPI_Bcast(w, 1, MPI_LONG_DOUBLE, 0, MPI_COMM_WORLD));
        CHECK(w[0] == 7.75L, "Bcast %Lg", w[0]);
        OK(MPI_Allgather(one, 2, MPI_LONG_DOUBLE, all, 2, MPI_LONG_DOUBLE, MPI_COMM_WORLD));
        for (k = 0; k < size; k++)
            CHECK(all[2 * k] == k + 0.25L && all[2 * k + 1] == -k - 0.5L, "Allgather [%d] %Lg %Lg", k, all[2 * k],
                  all[2 * k + 1]);
        OK(MPI_Gather(&z, 1, MPI_C_LONG_DOUBLE_COMPLEX, zs, 1, MPI_C_LONG_DOUBLE_COMPLEX, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (k = 0; k < size; k++)
                CHECK(zs[k] == k + 2.0L * k * 1.0iL, "Gather long double complex [%d]", k);
        OK(MPI_Bcast(one, 0, MPI_LONG_DOUBLE, 0, MPI_COMM_WORLD)); /* zero count */
        {
            struct ldi p[2] = { { 1.5L, 3 }, { -2.5L, 4 } }, q[2];
            memset(q, 0, sizeof q);
            OK(MPI_Sendrecv(p, 2, MPI_LONG_DOUBLE_INT, 0, 11, q, 2, MPI_LONG_DOUBLE_INT, 0, 11, MPI_COMM_SELF, &st));
            OK(MPI_Get_count(&st, MPI_LONG_DOUBLE_INT, &n));
            CHECK(n == 2 && q[1].ld == -2.5L && q[1].i == 4, "MPI_LONG_DOUBLE_INT: %d %Lg %d", n, q[1].ld, q[1].i);
            OK(MPI_Bcast(p, 2, MPI_LONG_DOUBLE_INT, 0, MPI_COMM_WORLD));
            err = MPI_Allreduce(p, q, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
            MPI_Error_class(err, &cls);
            CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "MINLOC on MPI_LONG_DOUBLE_INT: class %d", cls);
        }
        /* no Go arithmetic on long double: reductions say so */
        err = MPI_Allreduce(one, w, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "Allreduce on MPI_LONG_DOUBLE: class %d", cls);
    }
}

static void names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int n;
    OK(MPI_Type_get_name(MPI_LONG_LONG, name, &n));
    CHECK(strcmp(name, "MPI_LONG_LONG_INT") == 0, "MPI_LONG_LONG is named %s", name);
    OK(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &n));
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0, "MPI_C_FLOAT_COMPLEX is named %s", name);
    OK(MPI_Type_get_name(MPI_DOUBLE_INT, name, &n));
    CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0, "MPI_DOUBLE_INT is named %s", name);
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_rank = rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    removed();
    negative_extent();
    pairs();
    long_double();
    names();
    OK(MPI_Finalize());
    if (rank == 0)
        printf("mpich4 ok\n");
    return 0;
}
