package netfault

import (
	"net"
	"time"
)

// serveProxy accepts the connections redirected to node b's address and
// relays them to addr, delaying each direction by its link's delay. The
// dialing node is known by the connection's source address.
func (t *Net) serveProxy(ln net.Listener, b int, addr string) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return // closed
		}
		a := t.nodeOf(in.RemoteAddr())
		if a < 0 {
			in.Close()
			continue
		}
		go func() {
			out, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				in.Close()
				return
			}
			done := make(chan struct{}, 2)
			go relay(out, in, func() time.Duration { return t.link(a, b).Delay }, done)
			go relay(in, out, func() time.Duration { return t.link(b, a).Delay }, done)
			<-done
			in.Close()
			out.Close()
		}()
	}
}

// nodeOf returns the index of the node with addr's IP, or -1.
func (t *Net) nodeOf(addr net.Addr) int {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return -1
	}
	for i := range t.n {
		if tcp.IP.String() == t.NodeIP(i) {
			return i
		}
	}
	return -1
}

// relay copies src to dst, each chunk written no earlier than delay()
// after it was read, in order. It signals done when either side fails.
func relay(dst, src net.Conn, delay func() time.Duration, done chan<- struct{}) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	chunks := make(chan chunk, 256)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{buf[:n], time.Now().Add(delay())}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	done <- struct{}{}
	for range chunks {
		// The reader ends once the connections are closed.
	}
}
