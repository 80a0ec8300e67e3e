// grequest.c: calling the program's generalized-request functions
// (MPI_Grequest_start).

#include <stdint.h>
#include "include/mpi.h"

int mpiabi_call_grequest_query(uintptr_t fn, uintptr_t extra, void *status)
{
    return ((MPI_Grequest_query_function *)fn)((void *)extra, (MPI_Status *)status);
}

int mpiabi_call_grequest_free(uintptr_t fn, uintptr_t extra)
{
    return ((MPI_Grequest_free_function *)fn)((void *)extra);
}

int mpiabi_call_grequest_cancel(uintptr_t fn, uintptr_t extra, int complete)
{
    return ((MPI_Grequest_cancel_function *)fn)((void *)extra, complete);
}
