package main

import (
	"testing"

	"certa/replica"
)

func TestByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int{"1000": 1000, "64KiB": 64 << 10, "32MiB": 32 << 20, "60 MiB": 60 << 20, "1GiB": 1 << 30} {
		var b byteSize
		if err := b.Set(in); err != nil || int(b) != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5MiB", "32MB", "x", "3GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("%q accepted as %d", in, b)
		}
	}
	// The default write-set limit gets a 1 GiB memory limit.
	if got := memoryLimit(replica.DefaultMaxWriteSetBytes); got != 1<<30 {
		t.Errorf("memory limit for the default write-set limit: %d, want 1 GiB", got)
	}
}

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 400}, {1 << 20, 400}, {16 << 20, 400}, {32 << 20, 200}, {64 << 20, 100}, {1 << 30, 100},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}
