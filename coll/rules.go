package coll

// Rules is the default selection table (MPICH's generic.json as Go data):
// per collective, the first line whose bounds and restrictions hold wins.
// Every collective's lines end with an unbounded one.
var Rules = []Rule{
	// Intercommunicators: one algorithm each, since selection must agree
	// across two groups whose sizes and byte counts differ (inter_args.go).
	{Coll: Barrier, When: Inter, Alg: "inter_fanin_exchange"},
	{Coll: Bcast, When: Inter, Alg: "inter_remote_send_local_bcast"},
	{Coll: Gather, When: Inter, Alg: "inter_local_gather_remote_send"},
	{Coll: Gatherv, When: Inter, Alg: "inter_linear"},
	{Coll: Scatter, When: Inter, Alg: "inter_remote_send_local_scatter"},
	{Coll: Scatterv, When: Inter, Alg: "inter_linear"},
	{Coll: Allgather, When: Inter, Alg: "inter_gather_exchange_bcast"},
	{Coll: Allgatherv, When: Inter, Alg: "inter_remote_gather_local_bcast"},
	{Coll: Alltoall, When: Inter, Alg: "inter_pairwise"},
	{Coll: Alltoallv, When: Inter, Alg: "inter_pairwise"},
	{Coll: Reduce, When: Inter, Alg: "inter_local_reduce_remote_send"},
	{Coll: Allreduce, When: Inter, Alg: "inter_reduce_exchange_bcast"},
	{Coll: ReduceScatterBlock, When: Inter, Alg: "inter_reduce_exchange_scatter"},
	{Coll: ReduceScatter, When: Inter, Alg: "inter_reduce_exchange_scatterv"},

	// ranks sharing cores: fewest messages (as for Allreduce below)
	{Coll: Barrier, When: Oversubscribed, Alg: "tree"},
	{Coll: Barrier, Alg: "dissemination"},

	// ranks sharing cores: scatter_allgather moves about twice the bytes
	// of the tree in all, and the cores' total work is what costs (8 ranks
	// on 2 cores, 64 KiB: binomial 2× faster)
	{Coll: Bcast, When: Oversubscribed, Alg: "binomial"},
	{Coll: Bcast, MaxBytes: 12 << 10, Alg: "binomial"},
	{Coll: Bcast, MaxSize: 2, Alg: "binomial"},
	{Coll: Bcast, Alg: "scatter_allgather"},

	{Coll: Gather, Alg: "binomial"},
	{Coll: Gatherv, Alg: "linear"},
	{Coll: Scatter, Alg: "binomial"},
	{Coll: Scatterv, Alg: "linear"},

	// ranks sharing cores: fewest messages, as for Allreduce (8 ranks on 2
	// cores, 8 B: 7.2 µs against 8.6 and 7.6 against 14.0 for recursive
	// doubling, 4 ranks 3.3 against 3.6; even at 1 KiB, behind above it;
	// 2026-11-30, load 12)
	{Coll: Allgather, MaxBytes: 256, When: Oversubscribed, Alg: "gather_bcast"},
	// recursive doubling needs two extra rounds off powers of two; Bruck does not
	{Coll: Allgather, MaxBytes: 32 << 10, When: PowerOfTwo, Alg: "recursive_doubling"},
	{Coll: Allgather, MaxBytes: 32 << 10, Alg: "bruck"},
	{Coll: Allgather, Alg: "ring"},
	{Coll: Allgatherv, Alg: "ring"},

	// ranks sharing cores, tiny blocks: fewest messages, for n² blocks
	// moved (8 ranks on 2 cores, 8 B blocks, 3 interleaved rounds at load
	// ~1.6: 16.4–17.8 µs against Bruck's 24.2–26.3, 16 ranks 33–36
	// against 54–56; 64 B level at 8, 42 against 57–63 at 16; 256 B
	// Bruck's; 2026-11-30)
	{Coll: Alltoall, MaxSize: 16, MaxBytes: 64, When: Oversubscribed, Alg: "gather_bcast"},
	{Coll: Alltoall, MaxBytes: 256, Alg: "bruck"},
	// ranks sharing cores: one step instead of n-1 rounds of context
	// switches (8 ranks on 2 cores, 3 interleaved rounds at load 4.5:
	// 64 KiB 182–194 µs against pairwise's 191–215, 1 MiB 794–926 against
	// 1,202–1,471; Open MPI 219 and 5,857 on the same machine)
	{Coll: Alltoall, When: Oversubscribed, Alg: "linear"},
	{Coll: Alltoall, Alg: "pairwise"},
	{Coll: Alltoallv, Alg: "pairwise"},

	{Coll: Reduce, MaxBytes: 64 << 10, Alg: "binomial"},
	{Coll: Reduce, Alg: "rabenseifner"},
	{Coll: Reduce, Alg: "binomial"},

	// above 16 KiB halving the data beats exchanging it whole even at 2
	// ranks: 1 MiB float64 at 2 ranks, 184 µs against 358 (2026-11-24)
	// ranks sharing cores: fewest messages (8 ranks on 2 cores, 8 B:
	// 9.7 µs against 12.5; 16 KiB: 28 against 61; even at 64 KiB)
	{Coll: Allreduce, MaxBytes: 32 << 10, When: Oversubscribed, Alg: "reduce_bcast"},
	{Coll: Allreduce, MaxBytes: 16 << 10, Alg: "recursive_doubling"},
	{Coll: Allreduce, Alg: "rabenseifner"},
	{Coll: Allreduce, Alg: "ring"},
	{Coll: Allreduce, Alg: "recursive_doubling"},

	{Coll: ReduceScatterBlock, Alg: "recursive_halving"},
	{Coll: ReduceScatterBlock, Alg: "pairwise"},
	{Coll: ReduceScatter, Alg: "pairwise"},

	// ranks sharing cores: the chain's p-1 reductions against recursive
	// doubling's up to 2·p·log2 p (8 ranks on 2 cores: 8 B 10 µs against
	// 22, 64 KiB 70 against 350, 1 MiB some 5× less; 2026-11-29)
	{Coll: Scan, When: Oversubscribed, Alg: "linear"},
	{Coll: Scan, Alg: "recursive_doubling"},
	{Coll: Exscan, Alg: "recursive_doubling"},

	{Coll: NeighborAllgather, Alg: "linear"},
	{Coll: NeighborAllgatherv, Alg: "linear"},
	{Coll: NeighborAlltoall, Alg: "linear"},
	{Coll: NeighborAlltoallv, Alg: "linear"},
}
