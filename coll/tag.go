package coll

import (
	"hash/fnv"
	"strconv"
)

// Collective tags. Collectives travel in their communicator's collective
// context, so the whole 32-bit tag is the engine's:
//
//	 31                          12 11                  0
//	+------------------------------+---------------------+
//	|   sequence number (20 bits)  |  signature (12 bits) |
//	+------------------------------+---------------------+
//
// The sequence number is the communicator's count of collective calls,
// taken at the call (nonblocking) or at Init (persistent) by every rank
// alike, so messages of different collectives never meet; 2^20 calls may
// be outstanding at once. Receives match on the sequence bits only
// (SeqMask). The signature hashes the arguments every rank must agree on
// (collective, root, count, element type, op, algorithm): a message whose
// signature differs from the receiver's is a mismatch the receiver reports
// as ErrMismatch instead of reducing foreign data.
const (
	// SigBits is the width of the signature at the bottom of a tag.
	SigBits = 12
	// SeqMask selects the sequence bits of a tag.
	SeqMask uint32 = 1<<32 - 1<<SigBits
)

// Tag returns the tag of collective number seq with signature sig.
func Tag(seq, sig uint32) uint32 { return seq<<SigBits | sig&(1<<SigBits-1) }

// Seq returns the sequence number of a tag.
func Seq(tag uint32) uint32 { return tag >> SigBits }

// Signature hashes the arguments of a call that every rank must agree on.
// Counts of v-collectives are left out: MPI lets non-roots omit them.
func Signature(a *Args, alg string) uint32 {
	h := fnv.New32a()
	var b []byte
	b = strconv.AppendUint(b, uint64(a.Coll), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(a.Root), 10)
	b = append(b, '/')
	if a.Counts == nil {
		b = strconv.AppendInt(b, int64(a.Count), 10)
	}
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(a.ElemSize), 10)
	b = append(b, '/')
	b = strconv.AppendUint(b, uint64(a.Type), 10)
	b = append(b, '/')
	if a.Op != nil {
		b = append(b, a.Op.Name()...)
	}
	b = append(b, '/')
	b = append(b, alg...)
	h.Write(b)
	s := h.Sum32()
	return (s ^ s>>SigBits ^ s>>(2*SigBits)) & (1<<SigBits - 1)
}
