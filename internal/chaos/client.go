package chaos

import (
	"context"
	"math/rand/v2"
	"time"

	"certa/internal/pgclient"
)

// Outcome is what a client learned about an operation.
type Outcome int

const (
	OK   Outcome = iota // it happened
	Fail                // it certainly did not happen
	Info                // indeterminate: it may or may not have happened
)

// client is one workload client: a connection to some node, replaced by a
// connection to a random node after errors that leave it unusable.
type client struct {
	addrs []string
	conn  *pgclient.Conn
	rng   *rand.Rand
	fresh bool // conn is new: no session settings made yet
}

func newClient(addrs []string, seed uint64) *client {
	return &client{addrs: addrs, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// get returns a connection, connecting to a random node if needed.
func (c *client) get(ctx context.Context) (*pgclient.Conn, error) {
	if c.conn != nil {
		return c.conn, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := pgclient.Connect(cctx, c.addrs[c.rng.IntN(len(c.addrs))])
	if err != nil {
		return nil, err
	}
	c.conn, c.fresh = conn, true
	return conn, nil
}

// drop closes the connection after an error that may have left it in an
// unknown state.
func (c *client) drop() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *client) close() { c.drop() }

// classify maps an error to an outcome.
func classify(err error) Outcome {
	if err == nil {
		return OK
	}
	return outcomeOf(pgclient.SQLState(err))
}

// outcomeOf is the outcome of an operation that failed with SQLSTATE code
// ("" when the client got no answer, e.g. a lost connection): the codes
// that say the transaction did not commit are Fail; 40003 and no answer
// are Info (a COMMIT whose answer was not received may have happened).
func outcomeOf(code string) Outcome {
	switch code {
	case "", "40003":
		return Info
	}
	return Fail
}

// opTimeout bounds one statement of a workload.
const opTimeout = 10 * time.Second
