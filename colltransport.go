package meshmpi

import (
	"errors"
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
	"github.com/meshmpi/meshmpi/op"
	"github.com/meshmpi/meshmpi/peer"
)

// collTransport is a communicator seen by the collective engine:
// point-to-point in its collective context, ranks local to it.
type collTransport Comm

func (t *collTransport) Rank() int { return t.rank }
func (t *collTransport) Size() int { return len(t.ranks) }

func (t *collTransport) Send(rank int, tag uint32, p []byte, c coll.Completer, id int32) error {
	cm := (*Comm)(t)
	return cm.p.ep.SendNotify(peer.Standard, cm.ranks[rank], cm.collContext(), int32(tag), p, c, id)
}

func (t *collTransport) Recv(rank int, tag uint32, p []byte, c coll.Completer, id int32) error {
	cm := (*Comm)(t)
	return cm.p.ep.RecvNotify(cm.ranks[rank], cm.collContext(), int32(tag), collSeqMask, p, c, id)
}

// RecvReduce implements coll.RecvReducer with the accumulating receive.
func (t *collTransport) RecvReduce(rank int, tag uint32, p []byte, o *op.Op, typ op.Type, c coll.Completer, id int32) error {
	cm := (*Comm)(t)
	return cm.p.ep.RecvAccumulateNotify(cm.ranks[rank], cm.collContext(), int32(tag), collSeqMask, p, o, typ, c, id)
}

// NewChannel implements coll.Channels: an Op of the endpoint's pool that
// the Run keeps until it releases the channel.
func (t *collTransport) NewChannel() coll.Channel {
	cm := (*Comm)(t)
	return &collChannel{cm, cm.p.ep.GetOp()}
}

// collChannel is one transfer step's Op, started again at every start of
// its Run: no pool traffic per message.
type collChannel struct {
	c  *Comm
	op *peer.Op
}

func (ch *collChannel) Send(rank int, tag uint32, p []byte, c coll.Completer, id int32) error {
	ch.op.SetCompleter(c, id)
	return ch.c.p.ep.StartSend(ch.op, peer.Standard, ch.c.ranks[rank], ch.c.collContext(), int32(tag), p)
}

func (ch *collChannel) Recv(rank int, tag uint32, p []byte, c coll.Completer, id int32) error {
	ch.op.SetCompleter(c, id)
	return ch.c.p.ep.StartRecvMasked(ch.op, ch.c.ranks[rank], ch.c.collContext(), int32(tag), collSeqMask, p)
}

func (ch *collChannel) RecvReduce(rank int, tag uint32, p []byte, o *op.Op, typ op.Type, c coll.Completer, id int32) error {
	ch.op.SetCompleter(c, id)
	return ch.c.p.ep.StartRecvAccumulateMasked(ch.op, ch.c.ranks[rank], ch.c.collContext(), int32(tag), collSeqMask, p, o, typ)
}

func (ch *collChannel) Release() { ch.c.p.ep.PutOp(ch.op) }

// Abandon withdraws this rank's transfers of a failed collective and, if
// the failure is a disagreement between ranks that this rank found, tells
// every other rank (both groups of an intercommunicator), whose runs of
// the collective then fail too.
func (t *collTransport) Abandon(tag uint32, err error) {
	cm := (*Comm)(t)
	cm.p.ep.CancelTagged(cm.collContext(), int32(tag), collSeqMask, err)
	if !isMismatch(err) || errors.Is(err, errMismatchReported) || errors.Is(err, errMismatchEarlier) {
		return
	}
	cm.notify(coll.Seq(tag), false)
}

func isMismatch(err error) bool {
	return errors.Is(err, coll.ErrMismatch) || errors.Is(err, peer.ErrTagMismatch)
}

// collSeqMask is coll.SeqMask as the frame's signed tag.
const collSeqMask int32 = -1 << coll.SigBits

// ignore is the completer of transfers nobody waits for.
type ignore struct{}

func (ignore) Complete(int32, int, error) {}

var (
	// errMismatchReported fails a collective that another rank found the
	// ranks disagree on.
	errMismatchReported = fmt.Errorf("another rank found that the ranks called this collective with different arguments: %w", coll.ErrMismatch)
	// errMismatchEarlier fails every start of a persistent collective
	// after the one that found its ranks disagree.
	errMismatchEarlier = fmt.Errorf("an earlier start of this persistent collective found that the ranks called it with different arguments: %w", coll.ErrMismatch)
	errFreed           = errors.New("communicator freed")
)
