// Package coll is meshmpi's collective schedule engine.
//
// A collective is compiled into a Plan: a flat DAG of send, receive, local
// reduce and copy steps with explicit dependencies (MPICH gentran's model,
// with libNBC-style rounds through Builder.Fence). A Plan names buffers
// symbolically — the caller's send and receive buffers and a scratch area,
// each plus an offset — so one Plan serves every call with the same shape
// and is cached by that shape, never by buffer addresses. A Run is one
// execution of a Plan: dependency counters, bound buffers, the tag and the
// error. Persistent collectives keep their Run and Reset it at each start;
// nothing is allocated per start.
//
// The executor is event-driven: a Run issues every step whose dependencies
// are met, and advances only when the transport reports a step complete (a
// message arrived, a send drained). There is no polling loop and no
// goroutine per step; re-entrant completions are queued and drained by
// whoever is already running the Run.
//
// coll imports neither peer nor pion. It consumes the small Transport
// interface declared here, which the root package implements over a
// communicator's collective context, and the reduction kernels of op.
package coll
