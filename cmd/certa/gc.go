package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// The collector's pace. A node's heap is small (tens of MB) and its garbage
// is mostly short-lived per-statement buffers: collecting at 4x the live
// heap rather than 2x cut the collector's share of a node's CPU under
// oltp-write from 2% to 0.5%. But while a large write set commits, its
// copies make the live heap grow (a 22 MB write set: 60 MB live on a
// follower, 130 MB on its origin), and 4x that is memory the node takes
// for nothing: 280 and 360 MB of RSS. So the headroom over the live heap
// is 4x while that is at most gcHeadroomBytes, and shrinks towards 1x
// (GOGC's default) past it.
const (
	gcMaxPercent    = 400
	gcMinPercent    = 100
	gcHeadroomBytes = 64 << 20
)

// gcPercent is the collector's percentage for a live heap of live bytes.
func gcPercent(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	return int(min(gcMaxPercent, max(gcMinPercent, gcHeadroomBytes*100/live)))
}

// paceGC sets the collector's percentage now and after every collection,
// from the live heap that collection found.
func paceGC() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := -1
	var rearm func(*gcCycle)
	rearm = func(*gcCycle) {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			if p := gcPercent(sample[0].Value.Uint64()); p != current {
				current = p
				debug.SetGCPercent(p)
			}
		}
		runtime.SetFinalizer(new(gcCycle), rearm) // runs after the next collection
	}
	rearm(nil)
}

// gcCycle is garbage whose finalizer runs once per collection.
type gcCycle struct{ _ [64]byte } // not tiny: finalizers of tiny objects may never run
