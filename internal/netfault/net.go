// Package netfault gives every node of a local cluster its own network
// namespace, joined to the harness by a bridge, and injects network faults
// between the nodes: cuts (partitions, one-way), packet loss and delay.
//
// Cuts and loss are nftables rules in the nodes' namespaces, so the kernel
// drops real packets and TCP sees real timeouts and retransmissions. Delay
// needs netem, which not every kernel has, so node-to-node connections are
// redirected (DNAT in the dialer's namespace) through a proxy in the
// harness that holds each chunk of bytes for the link's delay.
//
// The harness itself (the root namespace) always reaches every node
// directly: faults are between nodes, never between the harness and a node.
// It needs root, ip (iproute2) and nft.
package netfault

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The nodes' ports. Every node has its own address, so they are the same
// on every node.
const (
	PGPort   = 5433
	HTTPPort = 8433
	RaftPort = 7433
)

// Link is the state of the packets from one node to another.
type Link struct {
	Cut   bool          // no packet arrives
	Loss  int           // percent of packets dropped
	Delay time.Duration // added to every byte's trip
}

// Net is the network of one cluster: n namespaces on one bridge.
type Net struct {
	subnet int // the third octet: nodes are 10.99.<subnet>.<i+1>
	n      int
	bridge string

	mu      sync.Mutex
	links   [][]Link // links[a][b]: from node a to node b
	proxies []net.Listener
}

// ErrUnavailable means this machine cannot run namespaced nodes.
var ErrUnavailable = errors.New("netfault: network namespaces need root, ip and nft")

// New creates the network for n nodes, with no faults.
func New(n int) (*Net, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: not running as root", ErrUnavailable)
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	// A free subnet: the bridge's name claims it. A subnet just released
	// may still have interfaces being removed, so each network of this
	// process starts its search elsewhere, and a failed setup moves on.
	var lastErr error
	for range 5 {
		s, err := claimSubnet()
		if err != nil {
			return nil, err
		}
		t := &Net{n: n, subnet: s, bridge: fmt.Sprintf("crt%dbr", s)}
		if lastErr = t.setup(); lastErr == nil {
			return t, nil
		}
		t.Close()
	}
	return nil, lastErr
}

var networksMade atomic.Int64

// claimSubnet creates the bridge of a free subnet and returns the subnet.
func claimSubnet() (int, error) {
	start := os.Getpid() + 37*int(networksMade.Add(1))
	for k := range 250 {
		s := (start+k)%250 + 1
		if run("ip", "link", "add", fmt.Sprintf("crt%dbr", s), "type", "bridge") == nil {
			return s, nil
		}
	}
	return 0, errors.New("netfault: no free subnet 10.99.1-250.0/24")
}

func (t *Net) setup() error {
	if err := runAll(
		[]string{"ip", "addr", "add", t.hostIP() + "/24", "dev", t.bridge},
		[]string{"ip", "link", "set", t.bridge, "up"},
	); err != nil {
		return err
	}
	t.links = make([][]Link, t.n)
	for i := range t.n {
		t.links[i] = make([]Link, t.n)
		ns, veth := t.namespace(i), fmt.Sprintf("crt%dv%d", t.subnet, i)
		if err := runAll(
			[]string{"ip", "netns", "add", ns},
			[]string{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
			[]string{"ip", "link", "set", veth, "master", t.bridge, "up"},
			[]string{"ip", "-n", ns, "addr", "add", t.NodeIP(i) + "/24", "dev", "eth0"},
			[]string{"ip", "-n", ns, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", ns, "link", "set", "lo", "up"},
		); err != nil {
			return err
		}
	}
	for b := range t.n {
		for _, port := range []int{HTTPPort, RaftPort} {
			ln, err := net.Listen("tcp", t.proxyAddr(b, port))
			if err != nil {
				return fmt.Errorf("netfault: proxy: %w", err)
			}
			t.proxies = append(t.proxies, ln)
			go t.serveProxy(ln, b, fmt.Sprintf("%s:%d", t.NodeIP(b), port))
		}
	}
	return t.apply()
}

// NodeIP is node i's address.
func (t *Net) NodeIP(i int) string { return fmt.Sprintf("10.99.%d.%d", t.subnet, i+1) }

func (t *Net) hostIP() string { return fmt.Sprintf("10.99.%d.254", t.subnet) }

func (t *Net) namespace(i int) string { return fmt.Sprintf("crt%dn%d", t.subnet, i) }

// proxyAddr is where connections to node b's port are redirected.
func (t *Net) proxyAddr(b, port int) string {
	svc := 0
	if port == RaftPort {
		svc = 1
	}
	return fmt.Sprintf("%s:%d", t.hostIP(), 10000+10*b+svc)
}

// Addrs returns node i's client, HTTP and Raft addresses.
func (t *Net) Addrs(i int) (pg, http, raft string, err error) {
	if i >= t.n {
		return "", "", "", fmt.Errorf("netfault: the network has %d nodes, not %d", t.n, i+1)
	}
	ip := t.NodeIP(i)
	return fmt.Sprintf("%s:%d", ip, PGPort), fmt.Sprintf("%s:%d", ip, HTTPPort), fmt.Sprintf("%s:%d", ip, RaftPort), nil
}

// Command returns the command that runs name with args inside node i's
// namespace. (ip netns exec execs the program: its process is the node's.)
func (t *Net) Command(i int, name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", t.namespace(i), name}, args...)...)
}

// SetLink sets the link from node a to node b.
func (t *Net) SetLink(a, b int, l Link) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.links[a][b] = l
	return t.apply()
}

// Set changes every link between distinct nodes with f (given a, b and
// the link's current state) at once.
func (t *Net) Set(f func(a, b int, l Link) Link) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for a := range t.n {
		for b := range t.n {
			if a != b {
				t.links[a][b] = f(a, b, t.links[a][b])
			}
		}
	}
	return t.apply()
}

// Heal removes every fault.
func (t *Net) Heal() error {
	return t.Set(func(a, b int, l Link) Link { return Link{} })
}

// link returns the link from a to b.
func (t *Net) link(a, b int) Link {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.links[a][b]
}

// apply loads every namespace's rules. Callers hold t.mu.
func (t *Net) apply() error {
	for x := range t.n {
		cmd := exec.Command("ip", "netns", "exec", t.namespace(x), "nft", "-f", "-")
		cmd.Stdin = strings.NewReader(t.rules(x))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("netfault: nft in %s: %v: %s", t.namespace(x), err, out)
		}
	}
	return nil
}

// Close removes the namespaces, the bridge and the proxies. The nodes'
// processes must be gone.
func (t *Net) Close() error {
	for _, ln := range t.proxies {
		ln.Close()
	}
	var errs []error
	for i := range t.n {
		if err := run("ip", "netns", "del", t.namespace(i)); err != nil {
			errs = append(errs, err)
		}
	}
	if t.bridge != "" {
		errs = append(errs, run("ip", "link", "del", t.bridge))
	}
	return errors.Join(errs...)
}

func run(name string, args ...string) error {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("netfault: %s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func runAll(cmds ...[]string) error {
	for _, c := range cmds {
		if err := run(c[0], c[1:]...); err != nil {
			return err
		}
	}
	return nil
}
