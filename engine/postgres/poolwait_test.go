package postgres

import (
	"context"
	"testing"
	"time"

	"certa/sqlerr"
)

// A statement cancelled, or timed out, while it waits for a free
// connection gets PostgreSQL's 57014 and words, as if it had reached
// PostgreSQL: a client (and tests) tell a cancel by them.
func TestPoolWaitEndsAsPostgreSQLCancels(t *testing.T) {
	p := &pool{slots: make(chan struct{}), done: make(chan struct{})} // no free slot
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	timedOut, stop := context.WithTimeout(context.Background(), time.Millisecond)
	defer stop()
	for ctx, want := range map[context.Context]string{
		cancelled: "canceling statement due to user request",
		timedOut:  "canceling statement due to statement timeout",
	} {
		_, err := p.get(ctx, nil)
		se := sqlerr.As(err)
		if se.Code != sqlerr.QueryCanceled || se.Message != want || se.Detail == "" {
			t.Errorf("get: %+v, want 57014 %q with a detail", se, want)
		}
	}
}
