//go:build cgo && unix

package host

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// capiProgram checks, in a world of one rank, what the WASI side of the C
// binding translates: wasm32's sizes (long, MPI_Aint, handles), handles
// and MPI_Aint values written back, request arrays, the predefined
// attributes' values in the guest's memory, MPI_Alloc_mem from the
// guest's malloc, a reduction function and an attribute copy function
// called back in the guest, MPI_BOTTOM with absolute addresses, a
// receive that stays pending while the guest's memory grows, and
// MPI_Is_thread_main after sleeps (the guest keeps its thread).
const capiProgram = `
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failed;
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "check failed: " __VA_ARGS__); fprintf(stderr, "\n"); failed = 1; } } while (0)

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = abs(a[i]) > abs(b[i]) ? a[i] : b[i];
    (void)dt;
}

static int copies;
static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    (void)c; (void)k; (void)extra;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Type_size(MPI_LONG, &size);
    CHECK(size == 4 && sizeof(long) == 4, "MPI_LONG is %d bytes", size);
    MPI_Type_size(MPI_AINT, &size);
    CHECK(size == 4 && sizeof(MPI_Aint) == 4, "MPI_AINT is %d bytes", size);
    CHECK(sizeof(MPI_Comm) == 4 && sizeof(MPI_Status) == 32, "handle %zu, status %zu", sizeof(MPI_Comm), sizeof(MPI_Status));

    MPI_Comm dup, dup2;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD, "Comm_dup gave %p", (void *)dup);

    int *tag_ub, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB %d", flag ? *tag_ub : -1);

    int key;
    MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(dup, key, (void *)100);
    MPI_Comm_dup(dup, &dup2);
    void *v = NULL;
    MPI_Comm_get_attr(dup2, key, &v, &flag);
    CHECK(flag && v == (void *)101 && copies == 1, "copied attribute %p (flag %d, copies %d)", v, flag, copies);

    char *mem;
    CHECK(MPI_Alloc_mem(1000, MPI_INFO_NULL, &mem) == MPI_SUCCESS && mem != NULL, "Alloc_mem");
    memset(mem, 7, 1000);
    MPI_Free_mem(mem);

    MPI_Aint lb, extent;
    MPI_Type_get_extent(MPI_DOUBLE, &lb, &extent);
    CHECK(lb == 0 && extent == 8, "extent %ld %ld", (long)lb, (long)extent);

    MPI_Op op;
    MPI_Op_create(maxabs, 1, &op);
    int in[3] = {-5, 2, 9}, out[3];
    MPI_Allreduce(in, out, 3, MPI_INT, op, dup);
    CHECK(out[0] == -5 && out[2] == 9, "user op %d %d", out[0], out[2]);
    MPI_Op_free(&op);

    int ia = 11, ra = 0;
    MPI_Aint aa, raa;
    MPI_Get_address(&ia, &aa);
    MPI_Get_address(&ra, &raa);
    CHECK(aa == (MPI_Aint)&ia, "Get_address %ld, &ia %p", (long)aa, (void *)&ia);
    MPI_Datatype ts, tr;
    MPI_Type_create_hindexed(1, (int[]){1}, (MPI_Aint[]){aa}, MPI_INT, &ts);
    MPI_Type_create_struct(1, (int[]){1}, (MPI_Aint[]){raa}, (MPI_Datatype[]){MPI_INT}, &tr);
    MPI_Type_commit(&ts);
    MPI_Type_commit(&tr);
    MPI_Sendrecv(MPI_BOTTOM, 1, ts, 0, 1, MPI_BOTTOM, 1, tr, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    CHECK(ra == 11, "MPI_BOTTOM received %d", ra);

    /* a receive pending while the memory grows by 64 MiB */
    enum { N = 1 << 20 };
    double *rbuf = malloc(N * sizeof(double)), *sbuf = malloc(N * sizeof(double));
    MPI_Request reqs[2];
    MPI_Irecv(rbuf, N, MPI_DOUBLE, 0, 2, dup, &reqs[0]);
    char *big = malloc(64 << 20);
    CHECK(big != NULL, "no 64 MiB");
    memset(big, 1, 64 << 20);
    for (int i = 0; i < N; i++)
        sbuf[i] = i;
    MPI_Isend(sbuf, N, MPI_DOUBLE, 0, 2, dup, &reqs[1]);
    MPI_Status st[2];
    MPI_Waitall(2, reqs, st);
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "requests not freed");
    int count;
    MPI_Get_count(&st[0], MPI_DOUBLE, &count);
    CHECK(count == N && rbuf[N - 1] == N - 1, "received %d, last %g", count, rbuf[N - 1]);

    /* the guest is its rank's main thread, across the sleeps that park
       its goroutine (a goroutine not locked to its thread wakes on any) */
    int mains = 0;
    for (int i = 0; i < 100; i++) {
        usleep(50);
        MPI_Is_thread_main(&flag);
        mains += flag;
    }
    CHECK(mains == 100, "MPI_Is_thread_main said so %d times of 100", mains);

    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    printf(failed ? "capi failed\n" : "capi ok\n");
    return failed;
}
`

// TestRunC compiles capiProgram for wasm32-wasi and runs it with RunC,
// in a process of its own (the C binding's state is the process's): the
// test binary again, told so by its environment.
func TestRunC(t *testing.T) {
	if os.Getenv("MESHMPI_CAPI_CHILD") != "" {
		module, err := os.ReadFile(os.Getenv("MESHMPI_CAPI_CHILD"))
		if err != nil {
			t.Fatal(err)
		}
		status, err := RunC(context.Background(), module, CRank{Name: "capi", Stdout: os.Stdout, Stderr: os.Stderr})
		if status != 0 || err != nil {
			t.Fatalf("status %d, %v", status, err)
		}
		return
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "capi.c")
	if err := os.WriteFile(src, []byte(capiProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(dir, "capi.wasm")
	out, err := exec.Command("go", "run", "../../cmd/meshcc", "--target", "wasm32-wasi", "-O2", "-Wall", "-o", wasm, src).CombinedOutput()
	if err != nil {
		msg := "no clang for wasm32-wasi (bash .ci/install-wasi-c installs it): " + err.Error() + "\n" + string(out)
		if os.Getenv("MESHMPI_C_WASI_TESTS") == "require" || !strings.Contains(string(out), "clang") {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestRunC$", "-test.count=1")
	c.Env = append(os.Environ(), "MESHMPI_CAPI_CHILD="+wasm)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil || !strings.Contains(stdout.String(), "capi ok") {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
}
