package sqlite

import (
	"math"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// PostgreSQL's mathematical functions, where SQLite's return NULL for an
// argument outside their domain (ln(0), sqrt(-1)) or an overflow, and
// PostgreSQL's fail: pgparse's printer calls these (pg_sqrt...) instead.
// Each returns NULL for a NULL argument.
var mathFunctions = map[string]func(args []float64) (float64, *sqlerr.Error){
	"pg_sqrt": func(a []float64) (float64, *sqlerr.Error) {
		if a[0] < 0 {
			return 0, sqlerr.New(sqlerr.InvalidArgumentForPower, "cannot take square root of a negative number")
		}
		return math.Sqrt(a[0]), nil
	},
	"pg_ln":    func(a []float64) (float64, *sqlerr.Error) { return logarithm(a[0], math.Log) },
	"pg_log10": func(a []float64) (float64, *sqlerr.Error) { return logarithm(a[0], math.Log10) },
	"pg_exp": func(a []float64) (float64, *sqlerr.Error) {
		return finite(math.Exp(a[0]), a...)
	},
	"pg_pow": func(a []float64) (float64, *sqlerr.Error) {
		x, y := a[0], a[1]
		switch {
		case x == 0 && y < 0:
			return 0, sqlerr.New(sqlerr.InvalidArgumentForPower, "zero raised to a negative power is undefined")
		case x < 0 && !math.IsInf(y, 0) && y != math.Trunc(y):
			return 0, sqlerr.New(sqlerr.InvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
		}
		return finite(math.Pow(x, y), a...)
	},
}

// logarithm is PostgreSQL's ln or log of x.
func logarithm(x float64, log func(float64) float64) (float64, *sqlerr.Error) {
	switch {
	case x == 0:
		return 0, sqlerr.New(sqlerr.InvalidArgumentForLog, "cannot take logarithm of zero")
	case x < 0:
		return 0, sqlerr.New(sqlerr.InvalidArgumentForLog, "cannot take logarithm of a negative number")
	}
	return log(x), nil
}

// finite refuses an infinite result of finite arguments, as PostgreSQL's
// overflow check does.
func finite(r float64, args ...float64) (float64, *sqlerr.Error) {
	if math.IsInf(r, 0) {
		for _, a := range args {
			if math.IsInf(a, 0) {
				return r, nil
			}
		}
		return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	}
	return r, nil
}

// registerMath makes the functions of mathFunctions on c. A failure is
// kept on c (funcErr) and the function returns NULL: the statement fails
// with it.
func registerMath(c *conn) error {
	for name, f := range mathFunctions {
		nargs := 1
		if name == "pg_pow" {
			nargs = 2
		}
		err := c.c.CreateFunction(name, &sqlite.FunctionImpl{
			NArgs: nargs, Deterministic: true, AllowIndirect: true,
			Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
				nums := make([]float64, len(args))
				for i, a := range args {
					if a.Type() == sqlite.TypeNull {
						return sqlite.Value{}, nil
					}
					_, x, _, err := numberOf(a)
					if err != nil {
						return c.failFunc(err)
					}
					nums[i] = x
				}
				r, err := f(nums)
				if err == nil && math.IsNaN(r) {
					err = errNaN
				}
				if err != nil {
					return c.failFunc(err)
				}
				return sqlite.FloatValue(r), nil
			},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// failFunc keeps err on c (funcErr) for the statement to fail with, and
// is what a function of the engine's returns then: NULL.
func (c *conn) failFunc(err *sqlerr.Error) (sqlite.Value, error) {
	if c.funcErr == nil {
		c.funcErr = err
	}
	return sqlite.Value{}, nil
}
