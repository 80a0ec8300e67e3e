// attr.c: calling the program's attribute copy and delete functions.

#include <stdint.h>
#include "include/mpi.h"

int mpiabi_call_copy(uintptr_t fn, uintptr_t comm, int keyval, uintptr_t extra, uintptr_t in, uintptr_t *out, int *flag)
{
    void *o = 0;
    int rc = ((MPI_Comm_copy_attr_function *)fn)((MPI_Comm)comm, keyval, (void *)extra, (void *)in, &o, flag);
    *out = (uintptr_t)o;
    return rc;
}

int mpiabi_call_delete(uintptr_t fn, uintptr_t comm, int keyval, uintptr_t val, uintptr_t extra)
{
    return ((MPI_Comm_delete_attr_function *)fn)((MPI_Comm)comm, keyval, (void *)val, (void *)extra);
}
