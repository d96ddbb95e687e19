package chaos

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"certa/internal/pgclient"
)

// register writes and reads single-key registers, the reads with
// certa.consistency = 'sync', and checks the history for linearizability
// with porcupine.
type register struct {
	keys  int
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

func newRegister() *register { return &register{keys: 4, start: time.Now()} }

func (w *register) Name() string { return "register" }

func (w *register) Setup(ctx context.Context, addr string) error {
	return withConn(ctx, addr, func(conn *pgclient.Conn) error {
		if _, err := conn.Exec(ctx, "CREATE TABLE registers (k integer PRIMARY KEY, v bigint NOT NULL)"); err != nil {
			return err
		}
		for k := range w.keys {
			if _, err := conn.Exec(ctx, "INSERT INTO registers VALUES ($1, 0)", k); err != nil {
				return err
			}
		}
		return nil
	})
}

func (w *register) Step(ctx context.Context, c *client, conn *pgclient.Conn) bool {
	if c.fresh {
		if _, err := conn.Exec(ctx, "SET certa.consistency = 'sync'"); err != nil {
			return false
		}
		c.fresh = false
	}
	in := registerInput{key: c.rng.IntN(w.keys), write: c.rng.IntN(2) == 0}
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
	ops := append([]porcupine.Operation(nil), w.ops...)
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
