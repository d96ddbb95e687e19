package certify

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"certa/writeset"
)

// ErrCorrupt is returned by Load when its input is not something Save wrote.
var ErrCorrupt = errors.New("certify: corrupt saved certifier")

// The saved form is
//
//	magic "CRTW", version byte 2
//	uvarint len(body), body, CRC-32C (Castagnoli) of body, big-endian
//
// and the body, with every integer a minimal uvarint and every string its
// uvarint length and bytes:
//
//	H
//	flags: 1 started, 2 committed, 4 global DDL
//	last                  if started
//	lastCommit            if committed
//	global DDL position   if global DDL
//	count of tables, then (name, position) for each, names strictly increasing
//	count of positions with keys, then for each, positions strictly increasing:
//	  position delta (from 0 for the first, from the previous one after)
//	  count of keys, then each key, strictly increasing, as
//	  (length of the prefix shared with the previous key of this position,
//	  rest of the key as a string); the shared length is exact (maximal)
//	  (version 3) count of shared keys, then each as the keys are
//	  (version 4) count of index keys, then each as the keys are
//
// Version 2 saves every commit in the window with all its keys, in position
// order, as the certifier queues them: a key written again later appears
// under each position and the last one counts. Saving is then one pass over
// the queue, with no lookups and no sort (a window of millions of keys took
// seconds to save in version 1, which saved each key only under its last
// position). Version 3 adds each commit's shared keys, version 4 its index
// keys. Load reads all four.
// The same history has exactly one saved form.
const (
	magic   = "CRTW"
	version = 4

	flagStarted   = 1
	flagCommitted = 2
	flagGlobal    = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Save writes the certifier's whole state (horizon, last positions, and the
// window of key and DDL positions) to w, in a compact binary form that is the
// same for the same state on every node (it is sorted, not in map order). It
// is meant to travel inside a Raft snapshot: Load reads exactly the bytes Save
// wrote, no more, so the caller may write other data after it. Save does not
// change c; it makes one Write call for a header and one for the rest.
func (c *Certifier) Save(w io.Writer) error {
	body := c.appendBody(nil)
	hdr := append([]byte(magic), version)
	hdr = binary.AppendUvarint(hdr, uint64(len(body)))
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("certify: save: %w", err)
	}
	body = binary.BigEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
	if _, err := w.Write(body); err != nil {
		return fmt.Errorf("certify: save: %w", err)
	}
	return nil
}

func (c *Certifier) appendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, c.horizon)
	var flags byte
	if c.started {
		flags |= flagStarted
	}
	if c.committed {
		flags |= flagCommitted
	}
	if c.hasGlobal {
		flags |= flagGlobal
	}
	b = append(b, flags)
	if c.started {
		b = binary.AppendUvarint(b, c.last)
	}
	if c.committed {
		b = binary.AppendUvarint(b, c.lastCommit)
	}
	if c.hasGlobal {
		b = binary.AppendUvarint(b, c.global)
	}

	tables := make([]string, 0, len(c.tableDDL))
	for t := range c.tableDDL {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	b = binary.AppendUvarint(b, uint64(len(tables)))
	for _, t := range tables {
		b = appendString(b, t)
		b = binary.AppendUvarint(b, c.tableDDL[t])
	}

	// Every commit in the window, in position order, with its keys (version
	// 2). A write set's keys are normally sorted and unique already.
	commits, keyq := c.commits.front(c.commits.len()), c.keyq.front(c.keyq.len())
	b = binary.AppendUvarint(b, uint64(len(commits)))
	var prevPos uint64
	var keys []writeset.Key
	for _, r := range commits {
		b = binary.AppendUvarint(b, r.seqno-prevPos)
		for _, n := range []int{r.n, r.shared, r.index} {
			keys = append(keys[:0], keyq[:n]...)
			keyq = keyq[n:]
			b = appendKeys(b, keys)
		}
		prevPos = r.seqno
	}
	return b
}

// appendKeys appends the count of keys, sorted and without duplicates,
// and each with the prefix it shares with the one before left out.
func appendKeys(b []byte, keys []writeset.Key) []byte {
	if !slices.IsSorted(keys) {
		slices.Sort(keys)
	}
	keys = slices.Compact(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	var prev writeset.Key
	for _, k := range keys {
		n := sharedPrefix(prev, k)
		b = binary.AppendUvarint(b, uint64(n))
		b = appendString(b, string(k[n:]))
		prev = k
	}
	return b
}

func sharedPrefix(a, b writeset.Key) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Load reads a certifier written by Save, consuming exactly the bytes Save
// wrote. The certifier it returns decides every later write set exactly as the
// saved one would have. Input that Save could not have written (truncated,
// altered, inconsistent) is refused with an error wrapping ErrCorrupt; Load
// never panics and allocates in proportion to the bytes actually read. An
// error reading r is returned wrapped.
func Load(r io.Reader) (*Certifier, error) {
	var hdr [len(magic) + 1]byte
	if err := readFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if string(hdr[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	v := hdr[len(magic)]
	if v < 1 || v > version {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorrupt, v)
	}
	n, err := readUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > math.MaxInt64-4 {
		return nil, fmt.Errorf("%w: body too long", ErrCorrupt)
	}
	// ReadAll grows its buffer as data arrives, so a corrupt length costs
	// nothing beyond the bytes really there.
	body, err := io.ReadAll(io.LimitReader(r, int64(n)+4))
	if err != nil {
		return nil, fmt.Errorf("certify: load: %w", err)
	}
	if uint64(len(body)) != n+4 {
		return nil, fmt.Errorf("%w: truncated", ErrCorrupt)
	}
	body, sum := body[:n], binary.BigEndian.Uint32(body[n:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	c, err := parseBody(body, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return c, nil
}

func readFull(r io.Reader, b []byte) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: truncated", ErrCorrupt)
		}
		return fmt.Errorf("certify: load: %w", err)
	}
	return nil
}

// readUvarint reads a minimal uvarint from r one byte at a time, so as not to
// read past it.
func readUvarint(r io.Reader) (uint64, error) {
	var buf [binary.MaxVarintLen64]byte
	for i := range buf {
		if err := readFull(r, buf[i:i+1]); err != nil {
			return 0, err
		}
		if buf[i] < 0x80 {
			v, n := binary.Uvarint(buf[:i+1])
			if n != i+1 || (n > 1 && buf[i] == 0) {
				return 0, fmt.Errorf("%w: bad length", ErrCorrupt)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: bad length", ErrCorrupt)
}

// parser reads a body, remembering the first error.
type parser struct {
	b   []byte
	err error
}

func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

// uvarint reads a minimal uvarint.
func (p *parser) uvarint() uint64 {
	if p.err != nil {
		return 0
	}
	v, n := binary.Uvarint(p.b)
	if n <= 0 || (n > 1 && p.b[n-1] == 0) {
		p.fail("bad varint")
		return 0
	}
	p.b = p.b[n:]
	return v
}

// count reads a count of items each taking at least one more byte.
func (p *parser) count() int {
	n := p.uvarint()
	if n > uint64(len(p.b)) {
		p.fail("count %d exceeds the %d bytes left", n, len(p.b))
		return 0
	}
	return int(n)
}

func (p *parser) byte() byte {
	if p.err != nil {
		return 0
	}
	if len(p.b) == 0 {
		p.fail("truncated")
		return 0
	}
	v := p.b[0]
	p.b = p.b[1:]
	return v
}

func (p *parser) string() string {
	n := p.count()
	if p.err != nil {
		return ""
	}
	s := string(p.b[:n])
	p.b = p.b[n:]
	return s
}

// keys reads a count of keys and the keys (appendKeys), calls f for each,
// and returns the count.
func (p *parser) keys(f func(writeset.Key)) int {
	nk := p.count()
	var prev writeset.Key
	for j := 0; j < nk && p.err == nil; j++ {
		shared := p.uvarint()
		rest := p.string()
		if shared > uint64(len(prev)) {
			p.fail("bad key prefix")
			break
		}
		k := prev[:shared] + writeset.Key(rest)
		if j > 0 && (k <= prev || sharedPrefix(prev, k) != int(shared)) {
			p.fail("keys out of order")
		}
		if j == 0 && shared != 0 {
			p.fail("bad key prefix")
		}
		f(k)
		prev = k
	}
	return nk
}

func parseBody(b []byte, version byte) (*Certifier, error) {
	p := &parser{b: b}
	h := p.uvarint()
	if p.err == nil && h == 0 {
		p.fail("zero horizon")
	}
	c := &Certifier{
		horizon:    h,
		keys:       make(map[writeset.Key]uint64),
		shared:     make(map[writeset.Key]uint64),
		tableDDL:   make(map[string]uint64),
		tableWrite: make(map[string]uint64),
	}
	flags := p.byte()
	if flags&^(flagStarted|flagCommitted|flagGlobal) != 0 {
		p.fail("unknown flags %#x", flags)
	}
	c.started = flags&flagStarted != 0
	c.committed = flags&flagCommitted != 0
	c.hasGlobal = flags&flagGlobal != 0
	if c.started {
		c.last = p.uvarint()
	}
	if c.committed {
		c.lastCommit = p.uvarint()
		if !c.started || c.lastCommit > c.last {
			p.fail("last commit %d after last position %d", c.lastCommit, c.last)
		}
	}
	// inWindow checks a recorded position: it was committed, and it is not
	// one that pruning would have removed.
	inWindow := func(what string, pos uint64) {
		if !c.committed || pos > c.lastCommit || (c.last >= h && pos <= c.last-h) {
			p.fail("%s position %d outside the window", what, pos)
		}
	}
	type ddlAt struct {
		pos   uint64
		table string
	}
	var ddls []ddlAt
	if c.hasGlobal {
		c.global = p.uvarint()
		inWindow("global DDL", c.global)
	}
	nt := p.count()
	for i := 0; i < nt && p.err == nil; i++ {
		t := p.string()
		pos := p.uvarint()
		inWindow("DDL", pos)
		if i > 0 && t <= ddls[i-1].table {
			p.fail("tables out of order")
		}
		ddls = append(ddls, ddlAt{pos, t})
		c.tableDDL[t] = pos
	}

	ng := p.count()
	var pos uint64
	for i := 0; i < ng && p.err == nil; i++ {
		d := p.uvarint()
		if (i > 0 && d == 0) || d > math.MaxUint64-pos {
			p.fail("positions out of order")
		}
		pos += d
		inWindow("key", pos)
		written := p.keys(func(k writeset.Key) {
			if _, dup := c.keys[k]; dup && version == 1 {
				p.fail("key recorded twice")
			}
			c.keys[k] = pos
			c.tableWrite[k.Table()] = max(c.tableWrite[k.Table()], pos)
			c.keyq.push(k)
		})
		shared := 0
		if version >= 3 {
			shared = p.keys(func(k writeset.Key) {
				c.shared[k] = pos
				c.keyq.push(k)
			})
		}
		index := 0
		if version >= 4 {
			index = p.keys(func(k writeset.Key) { c.keyq.push(k) })
		}
		if written == 0 && shared == 0 && index == 0 {
			p.fail("position without keys")
		}
		c.commits.push(commitRec{seqno: pos, n: written, shared: shared, index: index})
	}
	if p.err == nil && len(p.b) != 0 {
		p.fail("%d trailing bytes", len(p.b))
	}
	if p.err != nil {
		return nil, p.err
	}

	// Rebuild the DDL queue in position order, as Commit would have.
	slices.SortFunc(ddls, func(x, y ddlAt) int { return cmp.Compare(x.pos, y.pos) })
	globalQueued := !c.hasGlobal
	for i := 0; i < len(ddls); {
		j := i + 1
		for j < len(ddls) && ddls[j].pos == ddls[i].pos {
			j++
		}
		if !globalQueued && c.global <= ddls[i].pos {
			c.ddls.push(ddlRec{seqno: c.global})
			globalQueued = true
		}
		r := ddlRec{seqno: ddls[i].pos}
		for _, d := range ddls[i:j] {
			r.tables = append(r.tables, d.table)
		}
		c.ddls.push(r)
		i = j
	}
	if !globalQueued {
		c.ddls.push(ddlRec{seqno: c.global})
	}
	return c, nil
}
