package chaos

import (
	"context"
	"fmt"
	"sync"

	"certa/internal/pgclient"
)

// bank moves money between accounts in explicit transactions through
// random nodes; every read of all accounts must see the same total.
type bank struct {
	accounts int
	total    int64
	counts
	mu    sync.Mutex
	wrong []string // reads whose sum was wrong
}

func newBank() *bank { return &bank{accounts: 8, total: 8 * 100} }

func (b *bank) Name() string { return "bank" }

func (b *bank) Setup(ctx context.Context, addr string) error {
	return withConn(ctx, addr, func(conn *pgclient.Conn) error {
		if _, err := conn.Exec(ctx, "CREATE TABLE bank (id integer PRIMARY KEY, balance bigint NOT NULL)"); err != nil {
			return err
		}
		for i := range b.accounts {
			if _, err := conn.Exec(ctx, "INSERT INTO bank VALUES ($1, $2)", i, b.total/int64(b.accounts)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (b *bank) Step(ctx context.Context, c *client, conn *pgclient.Conn) bool {
	if c.rng.IntN(2) == 0 {
		return b.read(ctx, conn)
	}
	from, to := c.rng.IntN(b.accounts), c.rng.IntN(b.accounts)
	amount := 1 + c.rng.IntN(5)
	o := b.transfer(ctx, conn, from, to, amount)
	b.add(o)
	return o == OK // otherwise, whatever state the session is in, start afresh
}

func (b *bank) transfer(ctx context.Context, conn *pgclient.Conn, from, to, amount int) Outcome {
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{"BEGIN", nil},
		{"SELECT balance FROM bank WHERE id = $1", []any{from}},
		{"UPDATE bank SET balance = balance - $1 WHERE id = $2", []any{amount, from}},
		{"UPDATE bank SET balance = balance + $1 WHERE id = $2", []any{amount, to}},
	} {
		if _, err := conn.Exec(ctx, stmt.sql, stmt.args...); err != nil {
			return Fail // nothing commits before COMMIT
		}
	}
	_, err := conn.Exec(ctx, "COMMIT")
	return classify(err)
}

func (b *bank) read(ctx context.Context, conn *pgclient.Conn) bool {
	rows, err := conn.Query(ctx, "SELECT id, balance FROM bank")
	if err != nil {
		b.add(Fail)
		return false
	}
	b.add(OK)
	sum := int64(0)
	for _, r := range rows {
		sum += toInt64(r[1])
	}
	if sum != b.total || len(rows) != b.accounts {
		b.mu.Lock()
		b.wrong = append(b.wrong, fmt.Sprintf("a read saw %d accounts summing to %d, want %d summing to %d", len(rows), sum, b.accounts, b.total))
		b.mu.Unlock()
	}
	return true
}

func (b *bank) Check(ctx context.Context, addrs []string) Report {
	b.mu.Lock()
	anomalies := append([]string(nil), b.wrong...)
	b.mu.Unlock()
	for _, addr := range addrs {
		conn, err := pgclient.Connect(ctx, addr)
		if err != nil {
			anomalies = append(anomalies, fmt.Sprintf("final read on %s: %v", addr, err))
			continue
		}
		var sum int64
		rows, err := conn.Query(ctx, "SELECT id, balance FROM bank")
		conn.Close()
		for _, r := range rows {
			sum += toInt64(r[1])
		}
		if err != nil || sum != b.total || len(rows) != b.accounts {
			anomalies = append(anomalies, fmt.Sprintf("final read on %s: %d accounts, sum %d, %v", addr, len(rows), sum, err))
		}
	}
	return b.report(anomalies)
}

// toInt64 converts an integer column's value to int64 (a value that is
// not an integer shows as a wrong sum).
func toInt64(v any) int64 {
	n, ok := pgclient.Int64(v)
	if !ok {
		return -1 << 62
	}
	return n
}
