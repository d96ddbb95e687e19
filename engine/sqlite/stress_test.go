package sqlite

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// submission is a write set waiting for the test's little replication loop.
type submission struct {
	ws    *writeset.WriteSet
	reply chan bool // true: committed
}

// TestConcurrentWritersAndApplier runs local transactions on several
// goroutines against an applier that certifies (naively, by key) and applies
// their write sets in batches, as a node does with itself as the only member.
// Every error must be a 40001, and no update may be lost.
func TestConcurrentWritersAndApplier(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: 2 * time.Millisecond, LockTimeout: time.Second})
	const rows = 16
	e.ddl("CREATE TABLE acct (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
	e.ddl("CREATE TABLE audit (id INTEGER PRIMARY KEY, note TEXT)")
	stmts := []string{}
	for i := 0; i < rows; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO acct VALUES (%d, 0)", i))
	}
	e.commit(stmts...)

	subs := make(chan submission)
	stop := make(chan struct{})
	applierDone := make(chan error, 1)
	go func() { applierDone <- runApplier(e, subs, stop) }()

	const workers, perWorker = 4, 60
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(seed))
			for i := 0; i < perWorker; i++ {
				outcome, err := oneTx(e.Engine, rnd, rows, subs)
				mu.Lock()
				counts[outcome]++
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(int64(w))
	}
	wg.Wait()
	close(stop)
	if err := <-applierDone; err != nil {
		t.Fatal(err)
	}
	t.Logf("outcomes: %v", counts)
	sum := e.query("SELECT sum(v) FROM acct")[0][0].(int64)
	if sum != int64(counts["committed"]) {
		t.Fatalf("sum %d, want %d committed increments", sum, counts["committed"])
	}
}

// oneTx runs one local transaction: read a row, maybe read another, update
// one row, commit through the applier.
func oneTx(e *Engine, rnd *rand.Rand, rows int, subs chan<- submission) (string, error) {
	ctx := context.Background()
	tx, err := e.Begin(ctx)
	if err != nil {
		return "begin", err
	}
	defer tx.Rollback()
	stmts := []string{
		fmt.Sprintf("SELECT v FROM acct WHERE id = %d", rnd.Intn(rows)),
		fmt.Sprintf("UPDATE acct SET v = v + 1 WHERE id = %d", rnd.Intn(rows)),
	}
	if rnd.Intn(3) == 0 {
		// Reads a table nobody writes, then writes another: a stale
		// snapshot can always move forward.
		stmts = []string{"SELECT count(*) FROM audit WHERE id < 0",
			fmt.Sprintf("UPDATE acct SET v = v + 1 WHERE id = %d", rnd.Intn(rows))}
	}
	for _, s := range stmts {
		if err := tx.Exec(ctx, s, &recorder{}); err != nil {
			if sqlerr.Code(err) == sqlerr.SerializationFailure {
				return "engine 40001: " + sqlerr.As(err).Message[:40], nil
			}
			return "error", fmt.Errorf("%s: %w", s, err)
		}
	}
	ws, err := tx.WriteSet()
	if err != nil {
		if sqlerr.Code(err) == sqlerr.SerializationFailure {
			return "engine 40001 at commit", nil
		}
		return "error", err
	}
	tx.Rollback()
	reply := make(chan bool, 1)
	subs <- submission{ws, reply}
	if <-reply {
		return "committed", nil
	}
	return "certification failed", nil
}

// runApplier certifies submissions by key (first committer wins) and applies
// them in batches until stop is closed.
func runApplier(e *testEngine, subs <-chan submission, stop <-chan struct{}) error {
	last := map[writeset.Key]uint64{}
	for {
		var batch []submission
		select {
		case s := <-subs:
			batch = append(batch, s)
		case <-stop:
			return nil
		}
	more:
		for len(batch) < 8 {
			select {
			case s := <-subs:
				batch = append(batch, s)
			default:
				break more
			}
		}
		var items []engine.ApplyItem
		var passed []bool
		for _, s := range batch {
			ok := true
			for _, k := range s.ws.Keys {
				if last[k] > s.ws.Snapshot {
					ok = false
				}
			}
			passed = append(passed, ok)
			if !ok {
				continue
			}
			e.seqno++
			for _, k := range s.ws.Keys {
				last[k] = e.seqno
			}
			items = append(items, engine.ApplyItem{Seqno: e.seqno, WS: s.ws})
		}
		if err := e.Apply(context.Background(), items, e.seqno); err != nil {
			return err
		}
		for _, it := range items {
			if it.Err != nil {
				return it.Err
			}
		}
		for i, s := range batch {
			s.reply <- passed[i]
		}
	}
}
