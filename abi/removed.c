// removed.c: MPI_Errhandler_set and MPI_Errhandler_get, which MPI-3.0
// removed (MPI-4.1 §16.2: MPI_Comm_set_errhandler and _get replace them)
// and the standard ABI's header does not declare, kept in the library
// only, as MPICH keeps them: programs written for MPI-1 (MPICH's own
// coll/opsum and opprod) call them without a prototype and still link
// and run natively. include/mpi.h stays the standard's: a program that
// wants them declares them itself. A WASI guest has no import for them.

#include "include/mpi.h"

#define WEAK(name) __attribute__((weak, alias(#name)))

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) WEAK(PMPI_Errhandler_set);

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler) WEAK(PMPI_Errhandler_get);
