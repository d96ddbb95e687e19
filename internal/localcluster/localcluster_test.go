package localcluster

import "testing"

// FreeAddr never hands out a port twice, even though a port it returned
// stays free until a node binds it.
func TestFreeAddrUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 3000 {
		addr, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
	}
}
