package elle

// OpKind says what a micro-operation does.
type OpKind uint8

const (
	// Append adds Op.Value at the end of the list stored under Op.Key.
	Append OpKind = iota + 1
	// Read observes the whole list stored under Op.Key, in Op.Read.
	Read
)

func (k OpKind) String() string {
	switch k {
	case Append:
		return "append"
	case Read:
		return "read"
	}
	return "unknown"
}

// Op is one micro-operation of a transaction. Values appended to one key must
// be unique across the whole history: that is what lets a read name the
// transaction that wrote each element.
type Op struct {
	Kind  OpKind
	Key   string
	Value int   // the appended value (Append)
	Read  []int // the observed list, oldest first (Read); nil is the empty list
}

// Outcome is what the client learnt about a transaction's commit.
type Outcome uint8

const (
	// OK: committed, and its reads are what it observed.
	OK Outcome = iota
	// Fail: definitely aborted; nothing it wrote may ever be seen.
	Fail
	// Info: indeterminate (a timeout, a lost connection): it may or may not
	// have committed, and its reads are unknown.
	Info
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Info:
		return "info"
	}
	return "unknown"
}

// Txn is one transaction of a history. Transactions are named by their index
// in the history ("T3") in every report.
type Txn struct {
	Process int // the client that ran it; informational
	Ops     []Op
	Outcome Outcome
}

// element names one appended value: values are unique per key, not globally.
type element struct {
	key   string
	value int
}

// index holds what the appends of a history say, for looking reads up.
type index struct {
	writer map[element]int // the transaction that appended each value
	// final is each transaction's last append to each key: a read ending in
	// any earlier append of the same transaction is an intermediate read.
	final map[txnKey]int
}

type txnKey struct {
	txn int
	key string
}

func indexAppends(h []Txn) index {
	ix := index{writer: map[element]int{}, final: map[txnKey]int{}}
	for t, txn := range h {
		for _, op := range txn.Ops {
			if op.Kind != Append {
				continue
			}
			e := element{op.Key, op.Value}
			// The workload promises unique values; if it broke the promise,
			// the first writer keeps the value so that results stay stable.
			if _, dup := ix.writer[e]; !dup {
				ix.writer[e] = t
			}
			ix.final[txnKey{t, op.Key}] = op.Value
		}
	}
	return ix
}

// writerOf returns the transaction that appended v to key, or -1 when no
// transaction did.
func (ix index) writerOf(key string, v int) int {
	if t, ok := ix.writer[element{key, v}]; ok {
		return t
	}
	return -1
}
