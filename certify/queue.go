package certify

// fifo is a first-in first-out queue on one slice. Push is amortised O(1);
// dropping n elements from the front is amortised O(n): the live part is
// moved to the front of the slice only when the dead part is at least as large,
// so every element is copied at most once per time it is dropped past.
type fifo[T any] struct {
	buf  []T
	head int // buf[:head] are dropped (zeroed)
}

func (q *fifo[T]) len() int { return len(q.buf) - q.head }

func (q *fifo[T]) push(v ...T) { q.buf = append(q.buf, v...) }

// front returns the first n elements; valid until the next push or drop.
func (q *fifo[T]) front(n int) []T { return q.buf[q.head : q.head+n] }

// drop removes the first n elements.
func (q *fifo[T]) drop(n int) {
	clear(q.buf[q.head : q.head+n]) // let the GC have what they point to
	q.head += n
	switch {
	case q.head == len(q.buf):
		q.buf, q.head = q.buf[:0], 0
	case q.head >= 64 && q.head >= len(q.buf)-q.head:
		m := copy(q.buf, q.buf[q.head:])
		clear(q.buf[m:])
		q.buf, q.head = q.buf[:m], 0
	}
}
