package netfault

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the programs run inside the namespaces:
// NETFAULT_HELPER=echo serves an echo on RaftPort, =ping dials an address
// and prints the round trip of one line, or the error.
func TestMain(m *testing.M) {
	switch os.Getenv("NETFAULT_HELPER") {
	case "echo":
		ln, err := net.Listen("tcp", fmt.Sprintf(":%d", RaftPort))
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(1)
			}
			go func() {
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						c.Close()
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	case "ping":
		start := time.Now()
		c, err := net.DialTimeout("tcp", os.Getenv("NETFAULT_ADDR"), 2*time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			c.Write([]byte("ping\n"))
			_, err = bufio.NewReader(c).ReadString('\n')
		}
		if err != nil {
			fmt.Println("error", err)
		} else {
			fmt.Println("ok", time.Since(start).Milliseconds())
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFaults runs an echo server in node 1's namespace and pings it from
// node 0's: through a healed network, a delayed one, a cut and one-way cuts.
func TestFaults(t *testing.T) {
	nw, err := New(2)
	if err != nil {
		t.Fatalf("the chaos harness needs network namespaces: %v", err)
	}
	defer nw.Close()
	echo := nw.Command(1, os.Args[0])
	echo.Env = append(os.Environ(), "NETFAULT_HELPER=echo")
	if err := echo.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { echo.Process.Kill(); echo.Wait() }()
	_, _, raft1, _ := nw.Addrs(1)
	ping := func() string {
		cmd := nw.Command(0, os.Args[0])
		cmd.Env = append(os.Environ(), "NETFAULT_HELPER=ping", "NETFAULT_ADDR="+raft1)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	// The echo server may not listen yet.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.HasPrefix(ping(), "ok") {
		if time.Now().After(deadline) {
			t.Fatalf("no echo through the healed network: %s", ping())
		}
		time.Sleep(50 * time.Millisecond)
	}

	nw.Set(func(a, b int, l Link) Link { return Link{Delay: 150 * time.Millisecond} })
	var ms int
	if _, err := fmt.Sscanf(ping(), "ok %d", &ms); err != nil || ms < 300 {
		t.Errorf("with 150 ms each way: round trip %d ms (%v), want >= 300", ms, err)
	}
	for _, cut := range []struct {
		name string
		a, b int
	}{{"both ways", -1, -1}, {"0 to 1", 0, 1}, {"1 to 0", 1, 0}} {
		nw.Set(func(a, b int, l Link) Link { return Link{Cut: cut.a < 0 || (a == cut.a && b == cut.b)} })
		if got := ping(); !strings.HasPrefix(got, "error") {
			t.Errorf("cut %s: ping got %q, want an error", cut.name, got)
		}
	}
	nw.Heal()
	if got := ping(); !strings.HasPrefix(got, "ok") {
		t.Errorf("healed: %s", got)
	}
}

func TestRulesAreOnTheDialingSide(t *testing.T) {
	nw := &Net{n: 2, subnet: 7, links: [][]Link{{{}, {Cut: true}}, {{Loss: 10}, {}}}}
	r := nw.rules(0)
	for _, want := range []string{
		"ct original ip daddr 10.99.7.2 ct direction original drop",
		"ct original ip daddr 10.99.7.2 ct direction reply numgen random mod 100 < 10 drop",
		"ip daddr 10.99.7.2 tcp dport 7433 dnat to 10.99.7.254:10011",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("rules of node 0 lack %q:\n%s", want, r)
		}
	}
}
