// The exports of every collective in its blocking, nonblocking (MPI_I…)
// and persistent (MPI_…_init) forms, each with its large-count variant
// (_c): thin wrappers over the functions of coll.go, all alike.

package abi

/*
#include <stdint.h>
*/
import "C"

//export mpiabi_Bcast
func mpiabi_Bcast(buf uintptr, n int32, dt uintptr, root int32, comm uintptr) C.int {
	return bcast(buf, int64(n), dt, root, comm, blocking, 0, false)
}

//export mpiabi_Bcast_c
func mpiabi_Bcast_c(buf uintptr, n int64, dt uintptr, root int32, comm uintptr) C.int {
	return bcast(buf, int64(n), dt, root, comm, blocking, 0, true)
}

//export mpiabi_Ibcast
func mpiabi_Ibcast(buf uintptr, n int32, dt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return bcast(buf, int64(n), dt, root, comm, nonblocking, req, false)
}

//export mpiabi_Ibcast_c
func mpiabi_Ibcast_c(buf uintptr, n int64, dt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return bcast(buf, int64(n), dt, root, comm, nonblocking, req, true)
}

//export mpiabi_Bcast_init
func mpiabi_Bcast_init(buf uintptr, n int32, dt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Bcast_init", err)
	}
	return bcast(buf, int64(n), dt, root, comm, persistent, req, false)
}

//export mpiabi_Bcast_init_c
func mpiabi_Bcast_init_c(buf uintptr, n int64, dt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Bcast_init_c", err)
	}
	return bcast(buf, int64(n), dt, root, comm, persistent, req, true)
}

//export mpiabi_Gather
func mpiabi_Gather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr) C.int {
	return gather(s, int64(sn), st, r, int64(rn), rt, root, comm, blocking, 0, false)
}

//export mpiabi_Gather_c
func mpiabi_Gather_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr) C.int {
	return gather(s, int64(sn), st, r, int64(rn), rt, root, comm, blocking, 0, true)
}

//export mpiabi_Igather
func mpiabi_Igather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return gather(s, int64(sn), st, r, int64(rn), rt, root, comm, nonblocking, req, false)
}

//export mpiabi_Igather_c
func mpiabi_Igather_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return gather(s, int64(sn), st, r, int64(rn), rt, root, comm, nonblocking, req, true)
}

//export mpiabi_Gather_init
func mpiabi_Gather_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Gather_init", err)
	}
	return gather(s, int64(sn), st, r, int64(rn), rt, root, comm, persistent, req, false)
}

//export mpiabi_Gather_init_c
func mpiabi_Gather_init_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Gather_init_c", err)
	}
	return gather(s, int64(sn), st, r, int64(rn), rt, root, comm, persistent, req, true)
}

//export mpiabi_Gatherv
func mpiabi_Gatherv(s uintptr, sn int32, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, root int32, comm uintptr) C.int {
	return gatherv(s, int64(sn), st, r, counts, displs, rt, root, comm, blocking, 0, false)
}

//export mpiabi_Gatherv_c
func mpiabi_Gatherv_c(s uintptr, sn int64, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, root int32, comm uintptr) C.int {
	return gatherv(s, int64(sn), st, r, counts, displs, rt, root, comm, blocking, 0, true)
}

//export mpiabi_Igatherv
func mpiabi_Igatherv(s uintptr, sn int32, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return gatherv(s, int64(sn), st, r, counts, displs, rt, root, comm, nonblocking, req, false)
}

//export mpiabi_Igatherv_c
func mpiabi_Igatherv_c(s uintptr, sn int64, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return gatherv(s, int64(sn), st, r, counts, displs, rt, root, comm, nonblocking, req, true)
}

//export mpiabi_Gatherv_init
func mpiabi_Gatherv_init(s uintptr, sn int32, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Gatherv_init", err)
	}
	return gatherv(s, int64(sn), st, r, counts, displs, rt, root, comm, persistent, req, false)
}

//export mpiabi_Gatherv_init_c
func mpiabi_Gatherv_init_c(s uintptr, sn int64, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Gatherv_init_c", err)
	}
	return gatherv(s, int64(sn), st, r, counts, displs, rt, root, comm, persistent, req, true)
}

//export mpiabi_Scatter
func mpiabi_Scatter(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr) C.int {
	return scatter(s, int64(sn), st, r, int64(rn), rt, root, comm, blocking, 0, false)
}

//export mpiabi_Scatter_c
func mpiabi_Scatter_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr) C.int {
	return scatter(s, int64(sn), st, r, int64(rn), rt, root, comm, blocking, 0, true)
}

//export mpiabi_Iscatter
func mpiabi_Iscatter(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return scatter(s, int64(sn), st, r, int64(rn), rt, root, comm, nonblocking, req, false)
}

//export mpiabi_Iscatter_c
func mpiabi_Iscatter_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return scatter(s, int64(sn), st, r, int64(rn), rt, root, comm, nonblocking, req, true)
}

//export mpiabi_Scatter_init
func mpiabi_Scatter_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Scatter_init", err)
	}
	return scatter(s, int64(sn), st, r, int64(rn), rt, root, comm, persistent, req, false)
}

//export mpiabi_Scatter_init_c
func mpiabi_Scatter_init_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Scatter_init_c", err)
	}
	return scatter(s, int64(sn), st, r, int64(rn), rt, root, comm, persistent, req, true)
}

//export mpiabi_Scatterv
func mpiabi_Scatterv(s uintptr, counts uintptr, displs uintptr, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr) C.int {
	return scatterv(s, counts, displs, st, r, int64(rn), rt, root, comm, blocking, 0, false)
}

//export mpiabi_Scatterv_c
func mpiabi_Scatterv_c(s uintptr, counts uintptr, displs uintptr, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr) C.int {
	return scatterv(s, counts, displs, st, r, int64(rn), rt, root, comm, blocking, 0, true)
}

//export mpiabi_Iscatterv
func mpiabi_Iscatterv(s uintptr, counts uintptr, displs uintptr, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return scatterv(s, counts, displs, st, r, int64(rn), rt, root, comm, nonblocking, req, false)
}

//export mpiabi_Iscatterv_c
func mpiabi_Iscatterv_c(s uintptr, counts uintptr, displs uintptr, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, req uintptr) C.int {
	return scatterv(s, counts, displs, st, r, int64(rn), rt, root, comm, nonblocking, req, true)
}

//export mpiabi_Scatterv_init
func mpiabi_Scatterv_init(s uintptr, counts uintptr, displs uintptr, st uintptr, r uintptr, rn int32, rt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Scatterv_init", err)
	}
	return scatterv(s, counts, displs, st, r, int64(rn), rt, root, comm, persistent, req, false)
}

//export mpiabi_Scatterv_init_c
func mpiabi_Scatterv_init_c(s uintptr, counts uintptr, displs uintptr, st uintptr, r uintptr, rn int64, rt uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Scatterv_init_c", err)
	}
	return scatterv(s, counts, displs, st, r, int64(rn), rt, root, comm, persistent, req, true)
}

//export mpiabi_Allgather
func mpiabi_Allgather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr) C.int {
	return allgather(s, int64(sn), st, r, int64(rn), rt, comm, blocking, 0, false)
}

//export mpiabi_Allgather_c
func mpiabi_Allgather_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr) C.int {
	return allgather(s, int64(sn), st, r, int64(rn), rt, comm, blocking, 0, true)
}

//export mpiabi_Iallgather
func mpiabi_Iallgather(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, req uintptr) C.int {
	return allgather(s, int64(sn), st, r, int64(rn), rt, comm, nonblocking, req, false)
}

//export mpiabi_Iallgather_c
func mpiabi_Iallgather_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, req uintptr) C.int {
	return allgather(s, int64(sn), st, r, int64(rn), rt, comm, nonblocking, req, true)
}

//export mpiabi_Allgather_init
func mpiabi_Allgather_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Allgather_init", err)
	}
	return allgather(s, int64(sn), st, r, int64(rn), rt, comm, persistent, req, false)
}

//export mpiabi_Allgather_init_c
func mpiabi_Allgather_init_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Allgather_init_c", err)
	}
	return allgather(s, int64(sn), st, r, int64(rn), rt, comm, persistent, req, true)
}

//export mpiabi_Allgatherv
func mpiabi_Allgatherv(s uintptr, sn int32, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, comm uintptr) C.int {
	return allgatherv(s, int64(sn), st, r, counts, displs, rt, comm, blocking, 0, false)
}

//export mpiabi_Allgatherv_c
func mpiabi_Allgatherv_c(s uintptr, sn int64, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, comm uintptr) C.int {
	return allgatherv(s, int64(sn), st, r, counts, displs, rt, comm, blocking, 0, true)
}

//export mpiabi_Iallgatherv
func mpiabi_Iallgatherv(s uintptr, sn int32, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, comm uintptr, req uintptr) C.int {
	return allgatherv(s, int64(sn), st, r, counts, displs, rt, comm, nonblocking, req, false)
}

//export mpiabi_Iallgatherv_c
func mpiabi_Iallgatherv_c(s uintptr, sn int64, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, comm uintptr, req uintptr) C.int {
	return allgatherv(s, int64(sn), st, r, counts, displs, rt, comm, nonblocking, req, true)
}

//export mpiabi_Allgatherv_init
func mpiabi_Allgatherv_init(s uintptr, sn int32, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Allgatherv_init", err)
	}
	return allgatherv(s, int64(sn), st, r, counts, displs, rt, comm, persistent, req, false)
}

//export mpiabi_Allgatherv_init_c
func mpiabi_Allgatherv_init_c(s uintptr, sn int64, st uintptr, r uintptr, counts uintptr, displs uintptr, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Allgatherv_init_c", err)
	}
	return allgatherv(s, int64(sn), st, r, counts, displs, rt, comm, persistent, req, true)
}

//export mpiabi_Alltoall
func mpiabi_Alltoall(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr) C.int {
	return alltoall(s, int64(sn), st, r, int64(rn), rt, comm, blocking, 0, false)
}

//export mpiabi_Alltoall_c
func mpiabi_Alltoall_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr) C.int {
	return alltoall(s, int64(sn), st, r, int64(rn), rt, comm, blocking, 0, true)
}

//export mpiabi_Ialltoall
func mpiabi_Ialltoall(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, req uintptr) C.int {
	return alltoall(s, int64(sn), st, r, int64(rn), rt, comm, nonblocking, req, false)
}

//export mpiabi_Ialltoall_c
func mpiabi_Ialltoall_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, req uintptr) C.int {
	return alltoall(s, int64(sn), st, r, int64(rn), rt, comm, nonblocking, req, true)
}

//export mpiabi_Alltoall_init
func mpiabi_Alltoall_init(s uintptr, sn int32, st uintptr, r uintptr, rn int32, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Alltoall_init", err)
	}
	return alltoall(s, int64(sn), st, r, int64(rn), rt, comm, persistent, req, false)
}

//export mpiabi_Alltoall_init_c
func mpiabi_Alltoall_init_c(s uintptr, sn int64, st uintptr, r uintptr, rn int64, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Alltoall_init_c", err)
	}
	return alltoall(s, int64(sn), st, r, int64(rn), rt, comm, persistent, req, true)
}

//export mpiabi_Alltoallv
func mpiabi_Alltoallv(s uintptr, scounts uintptr, sdispls uintptr, st uintptr, r uintptr, rcounts uintptr, rdispls uintptr, rt uintptr, comm uintptr) C.int {
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, blocking, 0, false)
}

//export mpiabi_Alltoallv_c
func mpiabi_Alltoallv_c(s uintptr, scounts uintptr, sdispls uintptr, st uintptr, r uintptr, rcounts uintptr, rdispls uintptr, rt uintptr, comm uintptr) C.int {
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, blocking, 0, true)
}

//export mpiabi_Ialltoallv
func mpiabi_Ialltoallv(s uintptr, scounts uintptr, sdispls uintptr, st uintptr, r uintptr, rcounts uintptr, rdispls uintptr, rt uintptr, comm uintptr, req uintptr) C.int {
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, nonblocking, req, false)
}

//export mpiabi_Ialltoallv_c
func mpiabi_Ialltoallv_c(s uintptr, scounts uintptr, sdispls uintptr, st uintptr, r uintptr, rcounts uintptr, rdispls uintptr, rt uintptr, comm uintptr, req uintptr) C.int {
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, nonblocking, req, true)
}

//export mpiabi_Alltoallv_init
func mpiabi_Alltoallv_init(s uintptr, scounts uintptr, sdispls uintptr, st uintptr, r uintptr, rcounts uintptr, rdispls uintptr, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Alltoallv_init", err)
	}
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, persistent, req, false)
}

//export mpiabi_Alltoallv_init_c
func mpiabi_Alltoallv_init_c(s uintptr, scounts uintptr, sdispls uintptr, st uintptr, r uintptr, rcounts uintptr, rdispls uintptr, rt uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Alltoallv_init_c", err)
	}
	return alltoallv(s, scounts, sdispls, st, r, rcounts, rdispls, rt, comm, persistent, req, true)
}

//export mpiabi_Reduce
func mpiabi_Reduce(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, root int32, comm uintptr) C.int {
	return reduce(s, r, int64(n), dt, o, root, comm, blocking, 0, false)
}

//export mpiabi_Reduce_c
func mpiabi_Reduce_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, root int32, comm uintptr) C.int {
	return reduce(s, r, int64(n), dt, o, root, comm, blocking, 0, true)
}

//export mpiabi_Ireduce
func mpiabi_Ireduce(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, root int32, comm uintptr, req uintptr) C.int {
	return reduce(s, r, int64(n), dt, o, root, comm, nonblocking, req, false)
}

//export mpiabi_Ireduce_c
func mpiabi_Ireduce_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, root int32, comm uintptr, req uintptr) C.int {
	return reduce(s, r, int64(n), dt, o, root, comm, nonblocking, req, true)
}

//export mpiabi_Reduce_init
func mpiabi_Reduce_init(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Reduce_init", err)
	}
	return reduce(s, r, int64(n), dt, o, root, comm, persistent, req, false)
}

//export mpiabi_Reduce_init_c
func mpiabi_Reduce_init_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, root int32, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Reduce_init_c", err)
	}
	return reduce(s, r, int64(n), dt, o, root, comm, persistent, req, true)
}

//export mpiabi_Allreduce
func mpiabi_Allreduce(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr) C.int {
	return allreduce(s, r, int64(n), dt, o, comm, blocking, 0, false)
}

//export mpiabi_Allreduce_c
func mpiabi_Allreduce_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr) C.int {
	return allreduce(s, r, int64(n), dt, o, comm, blocking, 0, true)
}

//export mpiabi_Iallreduce
func mpiabi_Iallreduce(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return allreduce(s, r, int64(n), dt, o, comm, nonblocking, req, false)
}

//export mpiabi_Iallreduce_c
func mpiabi_Iallreduce_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return allreduce(s, r, int64(n), dt, o, comm, nonblocking, req, true)
}

//export mpiabi_Allreduce_init
func mpiabi_Allreduce_init(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Allreduce_init", err)
	}
	return allreduce(s, r, int64(n), dt, o, comm, persistent, req, false)
}

//export mpiabi_Allreduce_init_c
func mpiabi_Allreduce_init_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Allreduce_init_c", err)
	}
	return allreduce(s, r, int64(n), dt, o, comm, persistent, req, true)
}

//export mpiabi_Reduce_scatter_block
func mpiabi_Reduce_scatter_block(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr) C.int {
	return reduceScatterBlock(s, r, int64(n), dt, o, comm, blocking, 0, false)
}

//export mpiabi_Reduce_scatter_block_c
func mpiabi_Reduce_scatter_block_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr) C.int {
	return reduceScatterBlock(s, r, int64(n), dt, o, comm, blocking, 0, true)
}

//export mpiabi_Ireduce_scatter_block
func mpiabi_Ireduce_scatter_block(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return reduceScatterBlock(s, r, int64(n), dt, o, comm, nonblocking, req, false)
}

//export mpiabi_Ireduce_scatter_block_c
func mpiabi_Ireduce_scatter_block_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return reduceScatterBlock(s, r, int64(n), dt, o, comm, nonblocking, req, true)
}

//export mpiabi_Reduce_scatter_block_init
func mpiabi_Reduce_scatter_block_init(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Reduce_scatter_block_init", err)
	}
	return reduceScatterBlock(s, r, int64(n), dt, o, comm, persistent, req, false)
}

//export mpiabi_Reduce_scatter_block_init_c
func mpiabi_Reduce_scatter_block_init_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Reduce_scatter_block_init_c", err)
	}
	return reduceScatterBlock(s, r, int64(n), dt, o, comm, persistent, req, true)
}

//export mpiabi_Reduce_scatter
func mpiabi_Reduce_scatter(s uintptr, r uintptr, counts uintptr, dt uintptr, o uintptr, comm uintptr) C.int {
	return reduceScatter(s, r, counts, dt, o, comm, blocking, 0, false)
}

//export mpiabi_Reduce_scatter_c
func mpiabi_Reduce_scatter_c(s uintptr, r uintptr, counts uintptr, dt uintptr, o uintptr, comm uintptr) C.int {
	return reduceScatter(s, r, counts, dt, o, comm, blocking, 0, true)
}

//export mpiabi_Ireduce_scatter
func mpiabi_Ireduce_scatter(s uintptr, r uintptr, counts uintptr, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return reduceScatter(s, r, counts, dt, o, comm, nonblocking, req, false)
}

//export mpiabi_Ireduce_scatter_c
func mpiabi_Ireduce_scatter_c(s uintptr, r uintptr, counts uintptr, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return reduceScatter(s, r, counts, dt, o, comm, nonblocking, req, true)
}

//export mpiabi_Reduce_scatter_init
func mpiabi_Reduce_scatter_init(s uintptr, r uintptr, counts uintptr, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Reduce_scatter_init", err)
	}
	return reduceScatter(s, r, counts, dt, o, comm, persistent, req, false)
}

//export mpiabi_Reduce_scatter_init_c
func mpiabi_Reduce_scatter_init_c(s uintptr, r uintptr, counts uintptr, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Reduce_scatter_init_c", err)
	}
	return reduceScatter(s, r, counts, dt, o, comm, persistent, req, true)
}

//export mpiabi_Scan
func mpiabi_Scan(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr) C.int {
	return scan("MPI_Scan", s, r, int64(n), dt, o, comm, false, blocking, 0, false)
}

//export mpiabi_Scan_c
func mpiabi_Scan_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr) C.int {
	return scan("MPI_Scan", s, r, int64(n), dt, o, comm, false, blocking, 0, true)
}

//export mpiabi_Iscan
func mpiabi_Iscan(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return scan("MPI_Scan", s, r, int64(n), dt, o, comm, false, nonblocking, req, false)
}

//export mpiabi_Iscan_c
func mpiabi_Iscan_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return scan("MPI_Scan", s, r, int64(n), dt, o, comm, false, nonblocking, req, true)
}

//export mpiabi_Scan_init
func mpiabi_Scan_init(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Scan_init", err)
	}
	return scan("MPI_Scan", s, r, int64(n), dt, o, comm, false, persistent, req, false)
}

//export mpiabi_Scan_init_c
func mpiabi_Scan_init_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Scan_init_c", err)
	}
	return scan("MPI_Scan", s, r, int64(n), dt, o, comm, false, persistent, req, true)
}

//export mpiabi_Exscan
func mpiabi_Exscan(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr) C.int {
	return scan("MPI_Exscan", s, r, int64(n), dt, o, comm, true, blocking, 0, false)
}

//export mpiabi_Exscan_c
func mpiabi_Exscan_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr) C.int {
	return scan("MPI_Exscan", s, r, int64(n), dt, o, comm, true, blocking, 0, true)
}

//export mpiabi_Iexscan
func mpiabi_Iexscan(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return scan("MPI_Exscan", s, r, int64(n), dt, o, comm, true, nonblocking, req, false)
}

//export mpiabi_Iexscan_c
func mpiabi_Iexscan_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr, req uintptr) C.int {
	return scan("MPI_Exscan", s, r, int64(n), dt, o, comm, true, nonblocking, req, true)
}

//export mpiabi_Exscan_init
func mpiabi_Exscan_init(s uintptr, r uintptr, n int32, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Exscan_init", err)
	}
	return scan("MPI_Exscan", s, r, int64(n), dt, o, comm, true, persistent, req, false)
}

//export mpiabi_Exscan_init_c
func mpiabi_Exscan_init_c(s uintptr, r uintptr, n int64, dt uintptr, o uintptr, comm uintptr, info uintptr, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Exscan_init_c", err)
	}
	return scan("MPI_Exscan", s, r, int64(n), dt, o, comm, true, persistent, req, true)
}

//export mpiabi_Barrier
func mpiabi_Barrier(comm uintptr) C.int {
	return barrier(comm, blocking, 0)
}

//export mpiabi_Ibarrier
func mpiabi_Ibarrier(comm, req uintptr) C.int {
	return barrier(comm, nonblocking, req)
}

//export mpiabi_Barrier_init
func mpiabi_Barrier_init(comm, info, req uintptr) C.int {
	if err := infoArg(info); err != nil {
		return raise(comm, "MPI_Barrier_init", err)
	}
	return barrier(comm, persistent, req)
}

//export mpiabi_Reduce_local
func mpiabi_Reduce_local(in, inout uintptr, n int32, dt, o uintptr) C.int {
	return reduceLocal("MPI_Reduce_local", in, inout, int64(n), dt, o)
}

//export mpiabi_Reduce_local_c
func mpiabi_Reduce_local_c(in, inout uintptr, n int64, dt, o uintptr) C.int {
	return reduceLocal("MPI_Reduce_local_c", in, inout, n, dt, o)
}
