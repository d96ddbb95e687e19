package certify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"certa/writeset"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func save(t testing.TB, c *Certifier) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Save(&buf); err != nil {
		t.Fatalf("Save: %v", err)
	}
	return buf.Bytes()
}

// sample returns a certifier with keys at several positions, table and global
// DDL, and pruned history.
func sample(t testing.TB) *Certifier {
	c := New(8)
	n := uint64(0)
	step := func(ws writeset.WriteSet, commit bool) {
		n++
		if r := c.Certify(&ws, n); r.OK() && commit {
			c.Commit(&ws, n)
		}
	}
	for i := range 20 {
		step(dml(n, key("a", int64(i%5)), key("b", int64(i)), writeset.EncodeKey("c", "row", int64(i%3))), i%4 != 3)
	}
	step(ddl(n), true)
	step(ddl(n, "b", "c"), true)
	step(dml(n, key("a", 1)), true)
	step(dml(n, key("d", 1)), false)
	step(ddl(n, "a"), true)
	step(dml(n, key("a", 2)), true)
	return c
}

func TestSaveLoad(t *testing.T) {
	for _, c := range []*Certifier{New(1), New(1 << 40), sample(t)} {
		d := roundTrip(t, c)
		// Both decide the same from here on (the oracle test checks this
		// at length).
		for i := range 20 {
			ws := dml(c.LastSeqno()-uint64(i%9), key("a", int64(i%4)), key("b", int64(i)))
			if i%5 == 4 {
				ws = ddl(0, "a")
			}
			n := c.LastSeqno() + 1
			r1, r2 := c.Certify(&ws, n), d.Certify(&ws, n)
			if r1 != r2 {
				t.Fatalf("position %d: original %v, loaded %v", n, r1, r2)
			}
			if r1.OK() {
				c.Commit(&ws, n)
				d.Commit(&ws, n)
			}
		}
		if !bytes.Equal(save(t, c), save(t, d)) {
			t.Fatal("saved states differ")
		}
	}
}

func TestSaveDeterministic(t *testing.T) {
	// Map iteration order must not show.
	want := save(t, sample(t))
	for range 20 {
		if got := save(t, sample(t)); !bytes.Equal(got, want) {
			t.Fatal("Save output differs between runs")
		}
	}
}

func TestLoadReadsExactly(t *testing.T) {
	b := save(t, sample(t))
	r := io.MultiReader(iotest.OneByteReader(bytes.NewReader(b)), bytes.NewReader([]byte("rest")))
	if _, err := Load(r); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	if string(rest) != "rest" {
		t.Fatalf("Load left %q, want %q", rest, "rest")
	}
}

func TestLoadCorrupt(t *testing.T) {
	b := save(t, sample(t))
	for n := range len(b) {
		if _, err := Load(bytes.NewReader(b[:n])); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d of %d bytes: err = %v", n, len(b), err)
		}
	}
	for i := range len(b) * 8 {
		x := bytes.Clone(b)
		x[i/8] ^= 1 << (i % 8)
		if _, err := Load(bytes.NewReader(x)); err == nil {
			t.Fatalf("bit %d flipped: loaded", i)
		}
	}
	// A body with a good checksum but impossible contents.
	good := New(8)
	body := good.appendBody(nil)
	for _, tt := range []struct {
		name string
		body []byte
	}{
		{"empty", nil},
		{"zero horizon", []byte{0, 0, 0, 0}},
		{"unknown flag", []byte{8, 8, 0, 0}},
		{"trailing", append(bytes.Clone(body), 0)},
		{"commit without start", []byte{8, flagCommitted, 0, 0, 0}},
		{"commit after last", []byte{8, flagStarted | flagCommitted, 5, 6, 0, 0}},
		{"key before window", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 1, 12, 1, 0, 1, 'k', 0, 0}},
		{"key after last commit", []byte{8, flagStarted | flagCommitted, 20, 15, 0, 1, 16, 1, 0, 1, 'k', 0, 0}},
		{"position without keys", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 1, 16, 0, 0, 0}},
		{"same position twice", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 2, 16, 1, 0, 1, 'k', 0, 0, 0, 1, 0, 1, 'j', 0, 0}},
		{"keys out of order", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 1, 16, 2, 0, 1, 'k', 0, 1, 'j', 0, 0}},
		{"index keys out of order", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 1, 16, 0, 0, 2, 0, 1, 'k', 0, 1, 'j'}},
		{"shared keys out of order", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 1, 16, 0, 2, 0, 1, 'k', 0, 1, 'j', 0}},
		{"key prefix not maximal", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 1, 16, 2, 0, 2, 'k', 'a', 0, 2, 'k', 'b', 0, 0}},
		{"key prefix too long", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 1, 16, 2, 0, 1, 'k', 2, 1, 'b', 0, 0}},
		{"first key with prefix", []byte{8, flagStarted | flagCommitted, 20, 20, 0, 1, 16, 1, 1, 0, 0, 0}},
		{"tables out of order", []byte{8, flagStarted | flagCommitted, 20, 20, 2, 1, 'b', 16, 1, 'a', 16, 0}},
		{"global before window", []byte{8, flagStarted | flagCommitted | flagGlobal, 20, 20, 3, 0, 0}},
		{"non-minimal varint", []byte{0x88, 0x00, 0, 0, 0}},
		{"huge count", []byte{8, 0, 0xff, 0xff, 0x03, 0}},
	} {
		if _, err := Load(bytes.NewReader(frame(tt.body))); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v", tt.name, err)
		}
	}
	// The same framing of a good body loads (the cases above fail for
	// their contents, not their framing).
	ok := []byte{8, flagStarted | flagCommitted | flagGlobal, 20, 20, 13, 1, 1, 'a', 16, 2, 16, 2, 0, 2, 'k', 'a', 1, 1, 'b', 1, 0, 1, 'p', 1, 0, 1, 'x', 1, 1, 0, 1, 'j', 0, 0}
	c, err := Load(bytes.NewReader(frame(ok)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 4 || c.shared["p"] != 16 || !bytes.Equal(save(t, c), frame(ok)) {
		t.Fatalf("Len %d, shared %v, saved %x", c.Len(), c.shared, save(t, c))
	}
	// Version 1 (still read) saved each key under its last position only;
	// version 2 saves every commit with its keys, and the last one counts;
	// version 3 adds shared keys, version 4 index keys.
	twice := []byte{8, flagStarted | flagCommitted, 20, 20, 0, 2, 16, 1, 0, 1, 'k', 1, 1, 0, 1, 'k'}
	if _, err := Load(bytes.NewReader(frameVersion(1, twice))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 1, key twice: err = %v", err)
	}
	c, err = Load(bytes.NewReader(frameVersion(2, twice)))
	if err != nil || c.keys["k"] != 17 || c.Len() != 1 {
		t.Fatalf("key twice: err = %v, keys %v", err, c.keys)
	}
	noShared := []byte{8, flagStarted | flagCommitted | flagGlobal, 20, 20, 13, 1, 1, 'a', 16, 2, 16, 2, 0, 2, 'k', 'a', 1, 1, 'b', 1, 1, 0, 1, 'j'}
	for _, v := range []byte{1, 2} {
		if c, err = Load(bytes.NewReader(frameVersion(v, noShared))); err != nil || c.Len() != 3 {
			t.Fatalf("version %d: err = %v", v, err)
		}
	}
	noIndex := []byte{8, flagStarted | flagCommitted | flagGlobal, 20, 20, 13, 1, 1, 'a', 16, 2, 16, 2, 0, 2, 'k', 'a', 1, 1, 'b', 1, 0, 1, 'p', 1, 1, 0, 1, 'j', 0}
	for _, v := range []byte{3} {
		if c, err = Load(bytes.NewReader(frameVersion(v, noIndex))); err != nil || c.Len() != 4 {
			t.Fatalf("version %d: err = %v", v, err)
		}
	}
	// Non-minimal body length in the header.
	x := append([]byte(magic), version, 0x80|byte(len(body)), 0)
	x = append(x, frame(body)[len(magic)+2:]...)
	if _, err := Load(bytes.NewReader(x)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("non-minimal length: err = %v", err)
	}
	// Bad magic and version.
	for i := range len(magic) + 1 {
		x := frame(body)
		x[i]++
		if _, err := Load(bytes.NewReader(x)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("header byte %d changed: err = %v", i, err)
		}
	}
}

// frame wraps a body as Save does.
func frame(body []byte) []byte { return frameVersion(version, body) }

// frameVersion wraps a body as Save did in version v.
func frameVersion(v byte, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.WriteByte(v)
	b.Write(binary.AppendUvarint(nil, uint64(len(body))))
	b.Write(body)
	b.Write(binary.BigEndian.AppendUint32(nil, crc32.Checksum(body, castagnoli)))
	return b.Bytes()
}

func TestLoadReadError(t *testing.T) {
	boom := errors.New("boom")
	b := save(t, sample(t))
	for _, n := range []int{0, 3, len(b) / 2, len(b) - 1} {
		r := io.MultiReader(bytes.NewReader(b[:n]), iotest.ErrReader(boom))
		if _, err := Load(r); !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
			t.Errorf("error after %d bytes: err = %v", n, err)
		}
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

func TestSaveWriteError(t *testing.T) {
	for n := range 2 {
		if err := sample(t).Save(&failWriter{n}); err == nil {
			t.Errorf("write %d failed: no error", n)
		}
	}
}

// FuzzLoad: Load never panics, and whatever it accepts, Save writes back
// byte for byte.
func FuzzLoad(f *testing.F) {
	f.Add(save(f, New(3)))
	f.Add(save(f, sample(f)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		c, err := Load(r)
		if err != nil {
			return
		}
		used := b[:len(b)-r.Len()]
		if got := save(t, c); !bytes.Equal(got, used) {
			t.Fatalf("Save(Load(b)) = %x, want %x", got, used)
		}
	})
}

// FuzzParseBody fuzzes the body behind the checksum, which FuzzLoad can
// hardly reach: parseBody never panics and accepts only the one encoding
// of each state.
func FuzzParseBody(f *testing.F) {
	f.Add(New(3).appendBody(nil))
	f.Add(sample(f).appendBody(nil))
	rng := rand.New(rand.NewPCG(1, 2))
	c := New(5)
	for n := uint64(1); n < 40; n++ {
		ws := dml(n-1-rng.Uint64N(3), key("t", rng.Int64N(20)), key("u", rng.Int64N(20)))
		if rng.IntN(6) == 0 {
			ws = ddl(0, "t")
		}
		if c.Certify(&ws, n).OK() {
			c.Commit(&ws, n)
		}
	}
	f.Add(c.appendBody(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseBody(b, version)
		if err != nil {
			return
		}
		if got := c.appendBody(nil); !bytes.Equal(got, b) {
			t.Fatalf("appendBody(parseBody(b)) = %x, want %x", got, b)
		}
		// The loaded certifier is usable.
		ws := dml(c.LastSeqno(), key("t", 1))
		c.Certify(&ws, c.LastSeqno()+1)
	})
}
