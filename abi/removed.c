// removed.c: the calls MPI-3.0 removed (MPI-4.1 §16.2) and the standard
// ABI's header does not declare, kept in the library only, as MPICH keeps
// them: programs written for MPI-1 (MPICH's own coll/opsum and opprod,
// datatype/*_oldapi) call them without a prototype and still link and
// run natively. Each is its replacement's call:
//
//	MPI_Errhandler_set, _get   MPI_Comm_set_errhandler, _get
//	MPI_Address                MPI_Get_address
//	MPI_Type_extent            MPI_Type_get_extent's extent
//	MPI_Type_lb, MPI_Type_ub   MPI_Type_get_extent's lb, lb + extent
//	MPI_Type_hvector           MPI_Type_create_hvector
//	MPI_Type_hindexed          MPI_Type_create_hindexed
//	MPI_Type_struct            MPI_Type_create_struct
//
// include/mpi.h stays the standard's: a program that wants them declares
// them itself, and MPI_LB and MPI_UB, removed constants rather than
// calls, are not there (a program that names them does not compile). A
// WASI guest has no import for them.

#include "include/mpi.h"

#define WEAK(name) __attribute__((weak, alias(#name)))

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);
int PMPI_Address(void *location, MPI_Aint *address);
int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent);
int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement);
int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement);
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype);
int PMPI_Type_hindexed(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                       MPI_Datatype oldtype, MPI_Datatype *newtype);
int PMPI_Type_struct(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                     MPI_Datatype *array_of_types, MPI_Datatype *newtype);

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

int PMPI_Address(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}
int MPI_Address(void *location, MPI_Aint *address) WEAK(PMPI_Address);

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}
int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent) WEAK(PMPI_Type_extent);

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}
int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement) WEAK(PMPI_Type_lb);

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb, extent;
    int err = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (err == MPI_SUCCESS)
        *displacement = lb + extent;
    return err;
}
int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement) WEAK(PMPI_Type_ub);

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype) WEAK(PMPI_Type_hvector);

int PMPI_Type_hindexed(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements,
                                     oldtype, newtype);
}
int MPI_Type_hindexed(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                      MPI_Datatype oldtype, MPI_Datatype *newtype) WEAK(PMPI_Type_hindexed);

int PMPI_Type_struct(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                     MPI_Datatype *array_of_types, MPI_Datatype *newtype)
{
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                   array_of_types, newtype);
}
int MPI_Type_struct(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                    MPI_Datatype *array_of_types, MPI_Datatype *newtype) WEAK(PMPI_Type_struct);
