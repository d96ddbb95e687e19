package sqlite

import (
	"math"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// PostgreSQL's arithmetic operators, which pgparse's printer writes as
// these functions: SQLite's x / 0 is NULL where PostgreSQL's fails, its %
// makes both operands integers, and its sums and products that leave 64
// bits become doubles, and those that leave a double's range infinities
// or zero, where PostgreSQL's bigint and float8 ones fail (its numeric
// ones have a range no double holds: failing is the answer closest to
// theirs).
var arithmeticOperators = map[string]func(l, r number) (sqlite.Value, *sqlerr.Error){
	"pg_add": func(l, r number) (sqlite.Value, *sqlerr.Error) { return addOrSubtract(l, r, false) },
	"pg_sub": func(l, r number) (sqlite.Value, *sqlerr.Error) { return addOrSubtract(l, r, true) },
	"pg_mul": multiply,
	"pg_div": func(l, r number) (sqlite.Value, *sqlerr.Error) { return divide(l, r, false) },
	"pg_mod": func(l, r number) (sqlite.Value, *sqlerr.Error) { return divide(l, r, true) },
}

// number is an operand of arithmetic as numberOf reads it: an integer
// (isInt, i) or a double (f; also set for an integer).
type number struct {
	i     int64
	f     float64
	isInt bool
}

// outOfRange is 22003 with PostgreSQL's message (bigint out of range;
// value out of range: overflow), new each time: the caller may add to it.
func outOfRange(msg string) *sqlerr.Error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s", msg)
}

// arithmeticFunc makes op a function of two arguments: NULL if either is
// NULL, and the failure (kept with fail) of one that is no number.
func arithmeticFunc(op func(l, r number) (sqlite.Value, *sqlerr.Error), fail func(*sqlerr.Error) (sqlite.Value, error)) *sqlite.FunctionImpl {
	return &sqlite.FunctionImpl{NArgs: 2, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
		if args[0].Type() == sqlite.TypeNull || args[1].Type() == sqlite.TypeNull {
			return sqlite.Value{}, nil
		}
		var ops [2]number
		for i, a := range args {
			n, f, isInt, err := numberOf(a)
			if err != nil {
				return fail(err)
			}
			ops[i] = number{n, f, isInt}
		}
		v, err := op(ops[0], ops[1])
		if err != nil {
			return fail(err)
		}
		return v, nil
	}}
}

// divide is PostgreSQL's l / r (or l % r if mod): 22012 if r is zero;
// integers divide truncating toward zero, as PostgreSQL's do, other
// numbers as doubles, and % keeps the dividend's sign (PostgreSQL's
// numeric %).
func divide(l, r number, mod bool) (sqlite.Value, *sqlerr.Error) {
	if r.isInt && r.i == 0 || !r.isInt && r.f == 0 {
		return sqlite.Value{}, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	}
	switch {
	case l.isInt && r.isInt && r.i == -1:
		if !mod && l.i == math.MinInt64 {
			return sqlite.Value{}, outOfRange("bigint out of range")
		}
		if mod {
			return sqlite.IntegerValue(0), nil
		}
		return sqlite.IntegerValue(-l.i), nil
	case l.isInt && r.isInt && mod:
		return sqlite.IntegerValue(l.i % r.i), nil
	case l.isInt && r.isInt:
		return sqlite.IntegerValue(l.i / r.i), nil
	}
	q := l.f / r.f
	if mod {
		q = math.Mod(l.f, r.f)
	}
	if math.IsNaN(q) { // Infinity / Infinity
		return sqlite.Value{}, errNaN
	}
	return sqlite.FloatValue(q), nil
}

// multiply is PostgreSQL's l * r.
func multiply(l, r number) (sqlite.Value, *sqlerr.Error) {
	if l.isInt && r.isInt {
		p := l.i * r.i
		if l.i == -1 && r.i == math.MinInt64 || r.i == -1 && l.i == math.MinInt64 || l.i != 0 && p/l.i != r.i {
			return sqlite.Value{}, outOfRange("bigint out of range")
		}
		return sqlite.IntegerValue(p), nil
	}
	p := l.f * r.f
	switch {
	case math.IsInf(p, 0) && !math.IsInf(l.f, 0) && !math.IsInf(r.f, 0):
		return sqlite.Value{}, outOfRange("value out of range: overflow")
	case p == 0 && l.f != 0 && r.f != 0:
		return sqlite.Value{}, outOfRange("value out of range: underflow")
	}
	return sqlite.FloatValue(p), nil
}

// addOrSubtract is PostgreSQL's l + r (l - r if subtract).
func addOrSubtract(l, r number, subtract bool) (sqlite.Value, *sqlerr.Error) {
	if l.isInt && r.isInt {
		var sum int64
		var over bool
		if subtract {
			sum = l.i - r.i
			over = (l.i >= 0) != (r.i >= 0) && (sum >= 0) != (l.i >= 0)
		} else {
			sum = l.i + r.i
			over = (l.i >= 0) == (r.i >= 0) && (sum >= 0) != (l.i >= 0)
		}
		if over {
			return sqlite.Value{}, outOfRange("bigint out of range")
		}
		return sqlite.IntegerValue(sum), nil
	}
	rf := r.f
	if subtract {
		rf = -rf
	}
	sum := l.f + rf
	if math.IsInf(sum, 0) && !math.IsInf(l.f, 0) && !math.IsInf(rf, 0) {
		return sqlite.Value{}, outOfRange("value out of range: overflow")
	}
	return sqlite.FloatValue(sum), nil
}
