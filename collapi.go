package meshmpi

// The typed entry points of the collectives: for each one, the blocking
// call, the nonblocking I… call and the persistent …Init call (MPI-4.1
// chapter 6, §6.12, §6.13). Each takes Hints last. All three share the
// checks and the plan of one prepare function (collprep.go).

import "github.com/meshmpi/meshmpi/coll"

// Barrier blocks until every rank of c has called it (MPI_Barrier).
func Barrier(c *Comm, hs ...Hint) error {
	_, err := do(c, blocking, collCall{a: coll.Args{Coll: coll.Barrier}}, hs)
	return err
}

// Ibarrier starts a barrier (MPI_Ibarrier).
func Ibarrier(c *Comm, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, collCall{a: coll.Args{Coll: coll.Barrier}}, hs)
}

// BarrierInit creates a persistent barrier (MPI_Barrier_init).
func BarrierInit(c *Comm, hs ...Hint) (*Request, error) {
	return do(c, persistent, collCall{a: coll.Args{Coll: coll.Barrier}}, hs)
}

// Bcast broadcasts buf from root to every rank (MPI_Bcast).
func Bcast[T Element](c *Comm, buf []T, root int, hs ...Hint) error {
	_, err := do(c, blocking, prepBcast(c, buf, root), hs)
	return err
}

// Ibcast starts Bcast and returns its request (MPI_IBcast).
func Ibcast[T Element](c *Comm, buf []T, root int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepBcast(c, buf, root), hs)
}

// BcastInit creates a persistent Bcast, planned once, run by each Start (MPI_Bcast_init).
func BcastInit[T Element](c *Comm, buf []T, root int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepBcast(c, buf, root), hs)
}

// Gather gathers every rank's send, in rank order, into recv at root (len(send) elements each); recv matters only at root, where send may be InPlace (its block already in recv) (MPI_Gather).
func Gather[T Element](c *Comm, send, recv []T, root int, hs ...Hint) error {
	_, err := do(c, blocking, prepGather(c, coll.Gather, send, recv, nil, nil, root), hs)
	return err
}

// Igather starts Gather and returns its request (MPI_IGather).
func Igather[T Element](c *Comm, send, recv []T, root int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepGather(c, coll.Gather, send, recv, nil, nil, root), hs)
}

// GatherInit creates a persistent Gather, planned once, run by each Start (MPI_Gather_init).
func GatherInit[T Element](c *Comm, send, recv []T, root int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepGather(c, coll.Gather, send, recv, nil, nil, root), hs)
}

// Gatherv gathers rank r's send into recv[displs[r]:] (counts[r] elements) at root; counts and displs matter only at root (nil elsewhere), where send may be InPlace (MPI_Gatherv).
func Gatherv[T Element](c *Comm, send, recv []T, counts, displs []int, root int, hs ...Hint) error {
	_, err := do(c, blocking, prepGather(c, coll.Gatherv, send, recv, counts, displs, root), hs)
	return err
}

// Igatherv starts Gatherv and returns its request (MPI_IGatherv).
func Igatherv[T Element](c *Comm, send, recv []T, counts, displs []int, root int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepGather(c, coll.Gatherv, send, recv, counts, displs, root), hs)
}

// GathervInit creates a persistent Gatherv, planned once, run by each Start (MPI_Gatherv_init).
func GathervInit[T Element](c *Comm, send, recv []T, counts, displs []int, root int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepGather(c, coll.Gatherv, send, recv, counts, displs, root), hs)
}

// Scatter sends block r of root's send (len(recv) elements) to rank r; at root recv may be InPlace (its block stays in send) (MPI_Scatter).
func Scatter[T Element](c *Comm, send, recv []T, root int, hs ...Hint) error {
	_, err := do(c, blocking, prepScatter(c, coll.Scatter, send, nil, nil, recv, root), hs)
	return err
}

// Iscatter starts Scatter and returns its request (MPI_IScatter).
func Iscatter[T Element](c *Comm, send, recv []T, root int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepScatter(c, coll.Scatter, send, nil, nil, recv, root), hs)
}

// ScatterInit creates a persistent Scatter, planned once, run by each Start (MPI_Scatter_init).
func ScatterInit[T Element](c *Comm, send, recv []T, root int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepScatter(c, coll.Scatter, send, nil, nil, recv, root), hs)
}

// Scatterv sends send[displs[r]:] (counts[r] elements) of root to rank r's recv; counts and displs matter only at root, where recv may be InPlace (MPI_Scatterv).
func Scatterv[T Element](c *Comm, send []T, counts, displs []int, recv []T, root int, hs ...Hint) error {
	_, err := do(c, blocking, prepScatter(c, coll.Scatterv, send, counts, displs, recv, root), hs)
	return err
}

// Iscatterv starts Scatterv and returns its request (MPI_IScatterv).
func Iscatterv[T Element](c *Comm, send []T, counts, displs []int, recv []T, root int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepScatter(c, coll.Scatterv, send, counts, displs, recv, root), hs)
}

// ScattervInit creates a persistent Scatterv, planned once, run by each Start (MPI_Scatterv_init).
func ScattervInit[T Element](c *Comm, send []T, counts, displs []int, recv []T, root int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepScatter(c, coll.Scatterv, send, counts, displs, recv, root), hs)
}

// Allgather gathers every rank's send into every rank's recv, in rank order; send may be InPlace (each rank's block already in recv) (MPI_Allgather).
func Allgather[T Element](c *Comm, send, recv []T, hs ...Hint) error {
	_, err := do(c, blocking, prepAllgather(c, coll.Allgather, send, recv, nil, nil), hs)
	return err
}

// Iallgather starts Allgather and returns its request (MPI_IAllgather).
func Iallgather[T Element](c *Comm, send, recv []T, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepAllgather(c, coll.Allgather, send, recv, nil, nil), hs)
}

// AllgatherInit creates a persistent Allgather, planned once, run by each Start (MPI_Allgather_init).
func AllgatherInit[T Element](c *Comm, send, recv []T, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepAllgather(c, coll.Allgather, send, recv, nil, nil), hs)
}

// Allgatherv gathers rank r's send into every recv[displs[r]:] (counts[r] elements); send may be InPlace (MPI_Allgatherv).
func Allgatherv[T Element](c *Comm, send, recv []T, counts, displs []int, hs ...Hint) error {
	_, err := do(c, blocking, prepAllgather(c, coll.Allgatherv, send, recv, counts, displs), hs)
	return err
}

// Iallgatherv starts Allgatherv and returns its request (MPI_IAllgatherv).
func Iallgatherv[T Element](c *Comm, send, recv []T, counts, displs []int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepAllgather(c, coll.Allgatherv, send, recv, counts, displs), hs)
}

// AllgathervInit creates a persistent Allgatherv, planned once, run by each Start (MPI_Allgatherv_init).
func AllgathervInit[T Element](c *Comm, send, recv []T, counts, displs []int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepAllgather(c, coll.Allgatherv, send, recv, counts, displs), hs)
}

// Alltoall sends block r of send to rank r, which puts it in block (this rank) of recv; blocks are len(send)/Size elements; send may be InPlace (recv holds the blocks to send) (MPI_Alltoall).
func Alltoall[T Element](c *Comm, send, recv []T, hs ...Hint) error {
	_, err := do(c, blocking, prepAlltoall(c, send, recv), hs)
	return err
}

// Ialltoall starts Alltoall and returns its request (MPI_IAlltoall).
func Ialltoall[T Element](c *Comm, send, recv []T, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepAlltoall(c, send, recv), hs)
}

// AlltoallInit creates a persistent Alltoall, planned once, run by each Start (MPI_Alltoall_init).
func AlltoallInit[T Element](c *Comm, send, recv []T, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepAlltoall(c, send, recv), hs)
}

// Alltoallv sends send[senddispls[r]:] (sendcounts[r] elements) to rank r and receives rank r's into recv[recvdispls[r]:] (recvcounts[r]); send may be InPlace (recv, laid out by the receive counts, holds the data to send; counts must be symmetric) (MPI_Alltoallv).
func Alltoallv[T Element](c *Comm, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int, hs ...Hint) error {
	_, err := do(c, blocking, prepAlltoallv(c, send, sendcounts, senddispls, recv, recvcounts, recvdispls), hs)
	return err
}

// Ialltoallv starts Alltoallv and returns its request (MPI_IAlltoallv).
func Ialltoallv[T Element](c *Comm, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepAlltoallv(c, send, sendcounts, senddispls, recv, recvcounts, recvdispls), hs)
}

// AlltoallvInit creates a persistent Alltoallv, planned once, run by each Start (MPI_Alltoallv_init).
func AlltoallvInit[T Element](c *Comm, send []T, sendcounts, senddispls []int, recv []T, recvcounts, recvdispls []int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepAlltoallv(c, send, sendcounts, senddispls, recv, recvcounts, recvdispls), hs)
}

// Reduce combines every rank's send with o, in rank order, into recv at root; recv matters only at root, where send may be InPlace (MPI_Reduce).
func Reduce[T Element](c *Comm, send, recv []T, o *Op, root int, hs ...Hint) error {
	_, err := do(c, blocking, prepReduce(c, coll.Reduce, send, recv, o, root), hs)
	return err
}

// Ireduce starts Reduce and returns its request (MPI_IReduce).
func Ireduce[T Element](c *Comm, send, recv []T, o *Op, root int, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepReduce(c, coll.Reduce, send, recv, o, root), hs)
}

// ReduceInit creates a persistent Reduce, planned once, run by each Start (MPI_Reduce_init).
func ReduceInit[T Element](c *Comm, send, recv []T, o *Op, root int, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepReduce(c, coll.Reduce, send, recv, o, root), hs)
}

// Allreduce combines every rank's send with o, in rank order, into every rank's recv; send may be InPlace (recv holds the input) (MPI_Allreduce).
func Allreduce[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) error {
	_, err := do(c, blocking, prepReduce(c, coll.Allreduce, send, recv, o, 0), hs)
	return err
}

// Iallreduce starts Allreduce and returns its request (MPI_IAllreduce).
func Iallreduce[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepReduce(c, coll.Allreduce, send, recv, o, 0), hs)
}

// AllreduceInit creates a persistent Allreduce, planned once, run by each Start (MPI_Allreduce_init).
func AllreduceInit[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepReduce(c, coll.Allreduce, send, recv, o, 0), hs)
}

// ReduceScatterBlock combines every rank's send (Size blocks of len(recv) elements) with o and leaves block r of the result in rank r's recv; send may be InPlace (recv holds the whole input and gets the result at its start) (MPI_Reduce_scatter_block).
func ReduceScatterBlock[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) error {
	_, err := do(c, blocking, prepReduceScatter(c, coll.ReduceScatterBlock, send, recv, nil, o), hs)
	return err
}

// IreduceScatterBlock starts ReduceScatterBlock and returns its request (MPI_IReduce_scatter_block).
func IreduceScatterBlock[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepReduceScatter(c, coll.ReduceScatterBlock, send, recv, nil, o), hs)
}

// ReduceScatterBlockInit creates a persistent ReduceScatterBlock, planned once, run by each Start (MPI_Reduce_scatter_block_init).
func ReduceScatterBlockInit[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepReduceScatter(c, coll.ReduceScatterBlock, send, recv, nil, o), hs)
}

// ReduceScatter combines every rank's send with o and leaves the r-th block of the result (counts[r] elements, blocks in order) in rank r's recv; send may be InPlace (MPI_Reduce_scatter).
func ReduceScatter[T Element](c *Comm, send, recv []T, counts []int, o *Op, hs ...Hint) error {
	_, err := do(c, blocking, prepReduceScatter(c, coll.ReduceScatter, send, recv, counts, o), hs)
	return err
}

// IreduceScatter starts ReduceScatter and returns its request (MPI_IReduce_scatter).
func IreduceScatter[T Element](c *Comm, send, recv []T, counts []int, o *Op, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepReduceScatter(c, coll.ReduceScatter, send, recv, counts, o), hs)
}

// ReduceScatterInit creates a persistent ReduceScatter, planned once, run by each Start (MPI_Reduce_scatter_init).
func ReduceScatterInit[T Element](c *Comm, send, recv []T, counts []int, o *Op, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepReduceScatter(c, coll.ReduceScatter, send, recv, counts, o), hs)
}

// Scan leaves in rank r's recv the combination of ranks 0…r's send, in rank order; send may be InPlace (MPI_Scan).
func Scan[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) error {
	_, err := do(c, blocking, prepReduce(c, coll.Scan, send, recv, o, 0), hs)
	return err
}

// Iscan starts Scan and returns its request (MPI_IScan).
func Iscan[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepReduce(c, coll.Scan, send, recv, o, 0), hs)
}

// ScanInit creates a persistent Scan, planned once, run by each Start (MPI_Scan_init).
func ScanInit[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepReduce(c, coll.Scan, send, recv, o, 0), hs)
}

// Exscan leaves in rank r's recv the combination of ranks 0…r-1's send (rank 0's recv is untouched); send may be InPlace (MPI_Exscan).
func Exscan[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) error {
	_, err := do(c, blocking, prepReduce(c, coll.Exscan, send, recv, o, 0), hs)
	return err
}

// Iexscan starts Exscan and returns its request (MPI_IExscan).
func Iexscan[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) (*Request, error) {
	return do(c, nonblocking, prepReduce(c, coll.Exscan, send, recv, o, 0), hs)
}

// ExscanInit creates a persistent Exscan, planned once, run by each Start (MPI_Exscan_init).
func ExscanInit[T Element](c *Comm, send, recv []T, o *Op, hs ...Hint) (*Request, error) {
	return do(c, persistent, prepReduce(c, coll.Exscan, send, recv, o, 0), hs)
}
