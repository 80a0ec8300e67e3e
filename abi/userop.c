// userop.c: calling the program's reduction functions (MPI_Op_create).

#include <stdint.h>
#include "include/mpi.h"

void mpiabi_call_user_fn(uintptr_t fn, void *in, void *inout, int64_t len, uintptr_t dt, int large)
{
    MPI_Datatype d = (MPI_Datatype)dt;
    if (large) {
        MPI_Count n = len;
        ((MPI_User_function_c *)fn)(in, inout, &n, &d);
    } else {
        int n = (int)len;
        ((MPI_User_function *)fn)(in, inout, &n, &d);
    }
}
