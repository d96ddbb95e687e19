package chaos

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"certa/internal/pgclient"
)

// register writes and reads single-key registers, the reads with
// certa.consistency = 'sync', and checks the history for linearizability
// with porcupine.
//
// Clients work on registerHot keys at a time and move to fresh ones every
// keyEpoch. Porcupine's memory grows with the square of a key's
// history (its cache holds a bitset of the history per state it visits):
// four keys of a 400k-operation history took 5 GiB to check (measured on a
// synthetic one), and a 20-minute soak's harness was killed at 23 GiB. Per
// epoch, a key's history is a few thousand operations, while the contention
// stays that of four keys.
type register struct {
	next  atomic.Int64 // written values, unique
	start time.Time
	counts
	mu  sync.Mutex
	ops []porcupine.Operation
}

// registerInput is one operation's input: a write of value, or a read.
type registerInput struct {
	key   int
	write bool
	value int64
}

const (
	registerHot    = 4   // keys in use at a time
	registerEpochs = 200 // epochs before keys are reused (100 minutes)
)

func newRegister() *register { return &register{start: time.Now()} }

// key is a random key of the current epoch.
func (w *register) key(c *client) int {
	return epoch(w.start)%registerEpochs*registerHot + c.rng.IntN(registerHot)
}

func (w *register) Name() string { return "register" }

func (w *register) Setup(ctx context.Context, addr string) error {
	return withConn(ctx, addr, func(conn *pgclient.Conn) error {
		if _, err := conn.Exec(ctx, "CREATE TABLE registers (k integer PRIMARY KEY, v bigint NOT NULL)"); err != nil {
			return err
		}
		var rows []string
		for k := range registerHot * registerEpochs {
			rows = append(rows, fmt.Sprintf("(%d, 0)", k))
		}
		_, err := conn.Exec(ctx, "INSERT INTO registers VALUES "+strings.Join(rows, ", "))
		return err
	})
}

func (w *register) Step(ctx context.Context, c *client, conn *pgclient.Conn) bool {
	if c.fresh {
		if _, err := conn.Exec(ctx, "SET certa.consistency = 'sync'"); err != nil {
			return false
		}
		c.fresh = false
	}
	in := registerInput{key: w.key(c), write: c.rng.IntN(2) == 0}
	call := time.Since(w.start).Nanoseconds()
	var out int64
	var err error
	if in.write {
		in.value = w.next.Add(1)
		_, err = conn.Exec(ctx, "UPDATE registers SET v = $1 WHERE k = $2", in.value, in.key)
	} else {
		out, err = conn.QueryInt(ctx, "SELECT v FROM registers WHERE k = $1", in.key)
	}
	ret := time.Since(w.start).Nanoseconds()
	o := classify(err)
	w.add(o)
	switch {
	case o == OK:
		w.record(porcupine.Operation{Input: in, Call: call, Output: out, Return: ret})
	case o == Info && in.write:
		// It may take effect at any time after its call.
		w.record(porcupine.Operation{Input: in, Call: call, Output: int64(0), Return: math.MaxInt64})
	}
	return err == nil
}

func (w *register) record(op porcupine.Operation) {
	w.mu.Lock()
	w.ops = append(w.ops, op)
	w.mu.Unlock()
}

// registerModel is a register per key, starting at 0.
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(registerInput).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		in := input.(registerInput)
		if in.write {
			return true, in.value
		}
		return output.(int64) == state.(int64), state
	},
}

func (w *register) Check(ctx context.Context, addrs []string) Report {
	w.mu.Lock()
	ops := boundIndeterminate(w.ops)
	w.mu.Unlock()
	var anomalies []string
	switch res := porcupine.CheckOperationsTimeout(registerModel, ops, 3*time.Minute); res {
	case porcupine.Illegal:
		anomalies = append(anomalies, fmt.Sprintf("the history of %d register operations is not linearizable", len(ops)))
	case porcupine.Unknown:
		anomalies = append(anomalies, "linearizability check timed out (3m): result unknown")
	}
	return w.report(anomalies)
}

// boundIndeterminate returns the history with its indeterminate writes
// (Return math.MaxInt64: they may take effect at any time after their call)
// bounded: left open, every one of them stays concurrent with every later
// operation, which widens porcupine's search. Both steps keep the verdict, since written values are unique:
//   - a write whose value no successful read returned is dropped: if it
//     took effect, no read saw it before the next write, so a linearization
//     without it exists; and one with it, at the end, if one without exists;
//   - a write whose value a read returned took effect before that read
//     returned: its Return becomes the earliest such read's Return.
func boundIndeterminate(ops []porcupine.Operation) []porcupine.Operation {
	type written struct {
		key   int
		value int64
	}
	firstSeen := map[written]int64{} // Return of the earliest read of each value
	for _, op := range ops {
		in := op.Input.(registerInput)
		if in.write {
			continue
		}
		k := written{in.key, op.Output.(int64)}
		if r, ok := firstSeen[k]; !ok || op.Return < r {
			firstSeen[k] = op.Return
		}
	}
	out := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		if in := op.Input.(registerInput); in.write && op.Return == math.MaxInt64 {
			r, seen := firstSeen[written{in.key, in.value}]
			if !seen {
				continue
			}
			op.Return = max(r, op.Call)
		}
		out = append(out, op)
	}
	return out
}
