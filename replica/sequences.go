package replica

import (
	"context"
	"errors"
	"time"

	"certa/engine"
	"certa/sqlerr"
)

// sequenceLoop reserves blocks of values of the sequences the engine asks
// for (SERIAL and identity columns: engine.Engine.SequencesWanted), one at
// a time, until the node stops. A reservation is an ordinary write set, so
// it is ordered and certified like any commit: two nodes reserving at once
// conflict and one tries again on the newer state.
func (n *Node) sequenceLoop() {
	defer n.wg.Done()
	for {
		select {
		case <-n.stop:
			return
		case name := <-n.engine.SequencesWanted():
			n.reserveSequence(name)
		}
	}
}

// reserveRetryPause spaces failed reservations.
const reserveRetryPause = 200 * time.Millisecond

// maxReserveTries bounds the tries of one reservation that keeps losing
// certification to other nodes' reservations.
const maxReserveTries = 10

func (n *Node) reserveSequence(name string) {
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.CommitTimeout)
		ws, b, err := n.engine.ReserveSequence(ctx, name)
		if err == nil && ws != nil {
			_, err = n.Commit(ctx, ws)
		}
		cancel()
		switch {
		case err == nil && ws == nil: // dropped meanwhile
			n.engine.GrantSequence(engine.SequenceBlock{Name: name})
			return
		case err == nil:
			n.engine.GrantSequence(b)
			return
		case sqlerr.Code(err) == sqlerr.SerializationFailure && try < maxReserveTries:
			continue
		}
		n.cfg.Logger.Warn("reserve values of a sequence", "sequence", name, "err", err)
		// A pause before the engine may ask again: a reservation that
		// fails (no majority, a full disk) would otherwise be retried
		// at once, over and over.
		select {
		case <-n.stop:
		case <-time.After(reserveRetryPause):
		}
		n.engine.GrantSequence(engine.SequenceBlock{Name: name}) // asked for again when needed
		return
	}
}

// sequenceWait bounds how long a statement waits for values of a sequence
// before it is run again.
const sequenceWait = 5 * time.Second

// waitSequenceValues waits until the engine has values of the sequence err
// (engine.ErrNoSequenceValues) was about, and reports whether the statement
// may be run again.
func (n *Node) waitSequenceValues(ctx context.Context, err error) bool {
	var ne *engine.NoSequenceValuesError
	if !errors.As(err, &ne) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, sequenceWait)
	defer cancel()
	return n.engine.WaitSequenceValues(ctx, ne.Sequence) == nil
}
