// Package meshmpi gives Go programs MPI semantics on machines no cluster
// owns: browser tabs, WASI runtimes and native processes joined into one
// job.
//
// A program:
//
//	func main() {
//		err := meshmpi.Main(4, func(world *meshmpi.Comm) error {
//			part := []float64{float64(world.Rank() + 1)}
//			total := make([]float64, 1)
//			if err := meshmpi.Allreduce(world, part, total, meshmpi.Sum); err != nil {
//				return err
//			}
//			fmt.Printf("rank %d of %d: total %g\n", world.Rank(), world.Size(), total[0])
//			return nil
//		})
//		if err != nil {
//			log.Fatal(err)
//		}
//	}
//
// `go run .` runs it as 4 goroutines; `meshrun -n 4 .` as 4 WASI ranks
// joined over WebRTC (--native: 4 processes); the same program built with
// GOOS=js runs as a browser rank. Errors are values: every call returns
// one, and nothing panics.
//
// # From MPI and mpi4py
//
//	C (MPI-4.1)                 mpi4py                  meshmpi
//	MPI_Init / MPI_Finalize     (import)                Init / Finalize, or Main / Run
//	MPI_Comm_rank / _size       comm.Get_rank()         world.Rank(), world.Size()
//	MPI_Send / MPI_Recv         comm.Send / comm.Recv   Send(c, buf, dest, tag) / Recv(c, buf, src, tag)
//	MPI_Isend / MPI_Irecv       comm.Isend / Irecv      Isend / Irecv → *Request
//	MPI_Wait / MPI_Waitall      req.Wait()              req.Wait(ctx) / Waitall(ctx, reqs, statuses)
//	MPI_Sendrecv                comm.Sendrecv           Sendrecv(c, sbuf, dest, stag, rbuf, src, rtag)
//	MPI_Send_init / MPI_Start   comm.Send_init          SendInit / req.Start, Startall
//	MPI_Probe / MPI_Mprobe      comm.Probe              c.Probe / c.Mprobe + Mrecv
//	MPI_Bcast                   comm.Bcast              Bcast(c, buf, root)
//	MPI_Reduce / MPI_Allreduce  comm.Reduce / Allreduce Reduce(c, in, out, Sum, root) / Allreduce(c, in, out, Sum)
//	MPI_Gather / MPI_Scatter    comm.Gather / Scatter   Gather(c, send, recv, root) / Scatter(…)
//	MPI_Ibcast, MPI_Bcast_init  comm.Ibcast             Ibcast → *Request; BcastInit + Start
//	MPI_IN_PLACE                MPI.IN_PLACE            InPlace[T]()
//	MPI_ANY_SOURCE, MPI_PROC_NULL                       AnySource, AnyTag, ProcNull
//	MPI_Comm_split / _dup       comm.Split / Dup        c.Split(color, key) / c.Dup()
//	MPI_Cart_create / _shift    comm.Create_cart        c.CartCreate(dims, periods, reorder) / c.CartShift
//	MPI_Intercomm_create        comm.Create_intercomm   IntercommCreate(local, leader, peer, remote, tag)
//	MPI_Type_vector, _commit    MPI.DOUBLE.Create_vector dt, err := Vector(count, block, stride, Float64); dt.Commit()
//	MPI_SUM, MPI_MAXLOC         MPI.SUM, MPI.MAXLOC     Sum, MaxLoc (on Loc[T] pairs); NewOp for your own
//	comm.send / comm.recv (pickled objects)             object.Send / object.Recv[T] (package object)
//	comm.bcast / gather / allreduce (objects)           object.Bcast / object.Gather / object.Allreduce
//	MPI_ERR_TRUNCATE, MPI_ERR_PROC_FAILED               errors.Is(err, ErrTruncate), ErrProcFailed
//	MPIX_Comm_revoke / _shrink / _agree (ULFM)          c.Revoke() / c.Shrink() / c.Agree(flag), c.Iagree(&flag)
//	MPIX_Comm_get_failed / _ack_failed                  c.GetFailed() / c.AckFailed(n)
//	MPI_ERR_REVOKED, MPI_ERR_PROC_FAILED_PENDING        ErrRevoked, ErrProcFailedPending
//	MPI_Open_port, MPI_Publish_name                     c.OpenPort(), c.PublishName(service, port)
//	MPI_Lookup_name, MPI_Comm_connect / _accept         c.LookupName(ctx, service), c.Connect(port, root) / c.Accept(port, root)
//	MPI_COMM_SELF, MPI_Comm_disconnect                  c.Self(), c.Disconnect()
//
// Buffers are typed Go slices ([]float64, []int32, []Loc[float64], …); the
// element type is the MPI datatype, so counts are slice lengths.
//
// This package is the API users import. A rank gets its world communicator
// from Init (a process meshrun launched into a job, a browser page or WASI
// host that started it, or a world of one), from Join (a Session: one rank
// of a job, several per process allowed), or from Run (n ranks as
// goroutines over in-process memory links, or WithJob over a real job's
// mesh). Main picks Init or Run for a program's main function, so the same
// program runs natively, in a browser tab (GOOS=js) and under a WASI
// runtime (GOOS=wasip1). Communicators (Comm), intra- and
// intercommunicators, with Cartesian, graph and distributed-graph
// topologies, carry point-to-point operations over typed Go slices — Send,
// Recv, Isend, Irecv, the persistent SendInit and RecvInit, probes and
// matched probes, the accumulating RecvAccumulate — or over raw memory
// described by derived datatypes (SendTyped, RecvTyped), and every
// collective, neighborhood collectives included, in blocking, nonblocking
// (I…) and persistent (…Init) form. Every nonblocking or persistent
// operation is a Request, completed with Wait, Test and their …all, …any
// and …some forms.
//
// # Architecture
//
// The root package stands on peer, the point-to-point layer (matching,
// frames, the eager and rendezvous protocols, and the links: memory, pion
// WebRTC natively, the page's RTCPeerConnection in a browser), on
// signaling's client (a
// job's rendezvous: join, ranks, settings, the relay of connection set-up
// messages; package mesh turns it into peer's Dialer, so links connect on a
// pair's first message), on agree (the fault-tolerant agreement under
// Agree and Shrink), on coll, the collective schedule engine
// (plans, runs, algorithms, selection), and on op, the leaf that holds
// element types and reductions. Arrows point down only: peer and coll know
// nothing of each other, of communicators or of requests; this package
// translates ranks, validates arguments, gives coll a Transport over a
// communicator's collective context (colltransport.go), and owns the
// request state machine (MPI-4.1 §3.7–3.9). Under GOOS=wasip1 a rank has
// no network: package wasm's guest link carries its frames to the host
// that runs it (wasm/host, on wazero), which joins the mesh for it.
//
// # Errors
//
// Every error wraps one of the MPI error classes declared here (ErrRank,
// ErrTag, ErrTruncate, ErrProcFailed, …), so callers test them with
// errors.Is. Nothing panics across the API: a panic inside a rank started
// by Run becomes that rank's error and aborts the world.
//
// # Failures
//
// A rank that fails (its process ends, its tab closes, its links break)
// makes what involves it fail with ErrProcFailed on every rank, which
// hears of it within seconds even without a link to it. By default the
// job then ends; with KeepGoing (meshrun --keep-going, the keep-going job
// setting) the survivors go on, after ULFM (ft.go): point-to-point with
// live ranks keeps working, collectives on a communicator with a failed
// member fail, AnySource receives report ErrProcFailedPending until the
// failure is acknowledged (AckFailed), and Revoke, Agree and Shrink give
// a consistent view and a working communicator of the survivors. The
// agreement protocol is package agree.
//
// # Telemetry
//
// A job whose settings say telemetry=1 (SettingTelemetry; its interval
// and bound are SettingTelemetryInterval and SettingTelemetryOps) has its
// ranks report to its signaling server, for dashboards: every interval
// each rank sends the operations it completed (collectives, blocking,
// nonblocking or persistent, each start to its completion; point-to-point
// sends and receives, with the peer's world rank, the bytes and any
// error), the state of its links (candidate types, round trip, bytes each
// way) and the lines its program printed, and a last report before it
// leaves in Finalize. A native process that is its rank (Init, Main)
// tees os.Stdout and os.Stderr; a browser rank's page keeps its output
// lines (js/meshmpi.js); a WASI rank sends its operations to its host,
// which adds the links and the console it sees itself. With telemetry
// off an operation pays one nil check, and nothing is sent.
//
// # Jobs that grow
//
// A job whose token allows it (signaling's Claims.Max) admits ranks after
// it formed: volunteers, browser tabs, `meshrun join`. A late rank's world
// is itself alone (Comm.Late); it joins the computation the MPI way
// (port.go): the job opens a port and publishes it on its signaling
// server, the late rank looks it up and Connects while the job Accepts,
// and IntercommMerge makes one communicator of both (examples/grow,
// examples/farm).
//
// # Byte order
//
// Buffers travel in the machine's byte order; every meshmpi target (amd64,
// arm64, wasm) is little-endian and 64-bit, so a []int means the same on
// every rank of a mixed job.
package meshmpi
