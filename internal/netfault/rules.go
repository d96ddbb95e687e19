package netfault

import (
	"fmt"
	"strings"
)

// rules returns the nftables ruleset of node x's namespace.
//
// Every rule is written on the dialing side of a connection: x's rules
// match the connections x opened, by their original destination (before
// the redirection to the proxy), and drop x's packets on them in the
// output hook and the peer's answers in the input hook. The connections a
// peer y opens to x are covered by y's rules. So a cut or loss of the link
// a->b drops every packet a sends to b, on whichever side's connection.
func (t *Net) rules(x int) string {
	var out, in, nat strings.Builder
	for y := range t.n {
		if y == x {
			continue
		}
		ip := t.NodeIP(y)
		flow := fmt.Sprintf("ct original ip daddr %s", ip)
		drop := func(w *strings.Builder, dir string, l Link) {
			switch {
			case l.Cut:
				fmt.Fprintf(w, "    %s ct direction %s drop\n", flow, dir)
			case l.Loss > 0:
				fmt.Fprintf(w, "    %s ct direction %s numgen random mod 100 < %d drop\n", flow, dir, l.Loss)
			}
		}
		drop(&out, "original", t.links[x][y])
		drop(&in, "reply", t.links[y][x])
		for _, port := range []int{HTTPPort, RaftPort} {
			fmt.Fprintf(&nat, "    ip daddr %s tcp dport %d dnat to %s\n", ip, port, t.proxyAddr(y, port))
		}
	}
	return fmt.Sprintf(`flush ruleset
table inet certa {
  chain out {
    type filter hook output priority 0; policy accept;
%s  }
  chain in {
    type filter hook input priority 0; policy accept;
%s  }
}
table ip certanat {
  chain out {
    type nat hook output priority -100; policy accept;
%s  }
}
`, out.String(), in.String(), nat.String())
}
