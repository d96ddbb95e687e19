package pgwire

import (
	"net"
	"time"
)

// Admission. A connection is pending from accept until its client has
// authenticated, then admitted. Only admitted connections count against
// MaxConns, so clients that connect and never finish their startup (or
// guess passwords) cannot lock authenticated ones out: pending ones are
// bounded by MaxPending in all and MaxPendingPerAddress from one address.
// A connection beyond either waits, unread, until a slot frees (a pool
// that opens many connections at once gets them all, a little later), up
// to twice StartupTimeout, and at most maxWaiting connections wait: beyond, a
// connection is closed at once. Each must authenticate within
// StartupTimeout. A failed login from an address delays that address's
// next failures (doubling from authFailDelay up to maxAuthFailDelay),
// which does not slow other addresses down.
const (
	maxWaiting       = 1024
	authFailDelay    = 250 * time.Millisecond
	maxAuthFailDelay = 5 * time.Second
	// authFailMemory is how long an address's failures are remembered.
	authFailMemory = 10 * time.Minute
	// maxAuthFailAddrs bounds the addresses remembered.
	maxAuthFailAddrs = 10000
)

// admission is the server's count of pending and admitted connections and
// its record of failed logins. Its methods are called with Server.mu held.
type admission struct {
	pending  int
	perAddr  map[string]int // pending connections by remote address
	admitted int
	waiting  int           // connections waiting for a pending slot
	freed    chan struct{} // closed (and replaced) when a pending slot frees
	failures map[string]authFailures

	lastRefusalLog time.Time
}

type authFailures struct {
	count int
	last  time.Time
}

// enter counts a new connection from addr as pending; false when the
// pending limits are reached (the connection is to be closed).
func (a *admission) enter(addr string, cfg *Config) bool {
	if a.pending >= cfg.MaxPending || a.perAddr[addr] >= cfg.MaxPendingPerAddress {
		return false
	}
	if a.perAddr == nil {
		a.perAddr = map[string]int{}
	}
	a.pending++
	a.perAddr[addr]++
	return true
}

// leavePending ends a pending connection's count and wakes the waiting.
func (a *admission) leavePending(addr string) {
	a.pending--
	if a.perAddr[addr]--; a.perAddr[addr] <= 0 {
		delete(a.perAddr, addr)
	}
	if a.freed != nil {
		close(a.freed)
		a.freed = nil
	}
}

// slotFreed returns a channel closed when a pending slot frees.
func (a *admission) slotFreed() <-chan struct{} {
	if a.freed == nil {
		a.freed = make(chan struct{})
	}
	return a.freed
}

// admit turns a pending connection into an admitted one; false when
// MaxConns are admitted already (the connection stays pending).
func (a *admission) admit(addr string, cfg *Config) bool {
	if a.admitted >= cfg.MaxConns {
		return false
	}
	a.leavePending(addr)
	a.admitted++
	return true
}

// failed records a failed login from addr and returns how long to wait
// before telling the client.
func (a *admission) failed(addr string, now time.Time) time.Duration {
	if a.failures == nil {
		a.failures = map[string]authFailures{}
	}
	if len(a.failures) >= maxAuthFailAddrs {
		for k, f := range a.failures {
			if now.Sub(f.last) > authFailMemory {
				delete(a.failures, k)
			}
		}
	}
	f := a.failures[addr]
	if now.Sub(f.last) > authFailMemory {
		f.count = 0
	}
	delay := authFailDelay << min(f.count, 5)
	f.count++
	f.last = now
	if len(a.failures) < maxAuthFailAddrs || a.failures[addr].count > 0 {
		a.failures[addr] = f
	}
	return min(delay, maxAuthFailDelay)
}

// succeeded forgets addr's failed logins.
func (a *admission) succeeded(addr string) { delete(a.failures, addr) }

// remoteHost is the address a connection's limits are counted by: the
// client's IP address without its port.
func remoteHost(nc net.Conn) string {
	a := nc.RemoteAddr()
	if a == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}
