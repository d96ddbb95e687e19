package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("pgwire: server closed")

// Server accepts PostgreSQL clients on listeners and runs each connection in
// its own goroutine against a Session from its Backend.
type Server struct {
	cfg     Config
	cfgErr  error
	backend Backend
	log     *slog.Logger

	tlsConfig  *tls.Config // cfg.TLS as used for handshakes, or nil
	cancels    cancelRegistry
	mockSecret [32]byte // salts the mock credentials of unknown users

	// ctx is the parent of every connection's context; Close cancels it so
	// that running queries stop and connections know the server is going
	// away (and say so to their clients: 57P01).
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	adm       admission // pending and admitted connections, failed logins (admission.go)
	wg        sync.WaitGroup
}

// NewServer returns a server that opens sessions on b. Zero fields of cfg
// take their defaults; if cfg is invalid (see Config.Validate), Serve returns
// the error.
func NewServer(cfg Config, b Backend) *Server {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:       cfg,
		cfgErr:    cfg.Validate(),
		backend:   b,
		log:       cfg.Logger,
		tlsConfig: serverTLSConfig(cfg.TLS),
		ctx:       ctx,
		cancel:    cancel,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[net.Conn]struct{}),
	}
	rand.Read(s.mockSecret[:]) // never fails (crypto/rand panics instead)
	return s
}

// Serve accepts connections on ln until ln is closed or Close is called,
// and closes ln when it returns. After Close it returns ErrServerClosed;
// otherwise the error that stopped accepting. Serve may be called for
// several listeners at once.
func (s *Server) Serve(ln net.Listener) error {
	if s.cfgErr != nil {
		ln.Close()
		return s.cfgErr
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	var backoff time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			// Out of file descriptors and the like: wait and retry as
			// net/http does, rather than spin or give up on all clients.
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("pgwire: accept failed; retrying", "err", err, "in", backoff)
				select {
				case <-time.After(backoff):
					continue
				case <-s.ctx.Done():
					return ErrServerClosed
				}
			}
			return err
		}
		backoff = 0
		s.start(conn)
	}
}

// isTemporary reports errors that net/http also retries Accept on.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// start registers conn and runs it in a goroutine, once it may be pending
// (admission.go): it waits for a slot if need be, and is closed at once
// when too many wait already.
func (s *Server) start(conn net.Conn) {
	host := remoteHost(conn)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return
	}
	entered := s.adm.enter(host, &s.cfg)
	if !entered && s.adm.waiting >= maxWaiting {
		s.refused(host, "too many connections waiting to authenticate; closing new ones")
		s.mu.Unlock()
		conn.Close()
		return
	}
	if !entered {
		s.adm.waiting++
	}
	s.conns[conn] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()

	go func() {
		defer s.wg.Done()
		if !entered && !s.waitForSlot(host) {
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
			conn.Close()
			return
		}
		admitted := false
		defer func() {
			s.mu.Lock()
			delete(s.conns, conn)
			if admitted {
				s.adm.admitted--
			} else {
				s.adm.leavePending(host)
			}
			s.mu.Unlock()
		}()
		admitted = s.serveConn(conn, host)
	}()
}

// waitForSlot waits until a connection from host may be pending, and
// counts it; false if it may not (the connection is to be closed). It
// waits up to twice StartupTimeout: every pending connection frees its
// slot within StartupTimeout, so a waiter that is next in line gets one
// even if the connections ahead of it were accepted just before it.
func (s *Server) waitForSlot(host string) bool {
	timer := time.NewTimer(2 * s.cfg.StartupTimeout)
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.adm.waiting-- }()
	for !s.adm.enter(host, &s.cfg) {
		freed := s.adm.slotFreed()
		s.mu.Unlock()
		select {
		case <-freed:
			s.mu.Lock()
		case <-timer.C:
			s.mu.Lock()
			s.refused(host, "a connection waited too long to start authenticating; closing it")
			return false
		case <-s.ctx.Done():
			s.mu.Lock()
			return false
		}
	}
	return true
}

// refused logs a refused connection, at most once a second. s.mu is held.
func (s *Server) refused(host, msg string) {
	if time.Since(s.adm.lastRefusalLog) < time.Second {
		return
	}
	s.adm.lastRefusalLog = time.Now()
	s.log.Warn("pgwire: "+msg, "remote", host, "max_pending", s.cfg.MaxPending, "max_pending_per_address", s.cfg.MaxPendingPerAddress)
}

// admit counts an authenticated connection from host against MaxConns;
// false when the server is full.
func (s *Server) admit(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.adm.admit(host, &s.cfg)
}

// loginFailed records a failed login from host and returns how long to
// wait before saying so; loginSucceeded forgets host's failures.
func (s *Server) loginFailed(host string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.adm.failed(host, time.Now())
}

func (s *Server) loginSucceeded(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adm.succeeded(host)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the server: it closes every listener, tells every client the
// server is shutting down (57P01) and closes its connection, and waits until
// every connection goroutine has ended and closed its session. Running
// queries see their context cancelled; Close waits for them to return.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	var errs []error
	for ln := range s.listeners {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	// Cancel before touching deadlines: a connection goroutine that moves
	// its own deadline checks the context afterwards (see conn.setDeadline),
	// so one of the two always sees the other.
	s.cancel()
	for conn := range s.conns {
		// Wake blocked reads and writes instead of closing outright, so the
		// connection's goroutine can still say goodbye; it closes the conn.
		if err := conn.SetDeadline(time.Now()); err != nil {
			conn.Close() // no deadlines on this conn: no goodbye either
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	return errors.Join(errs...)
}
