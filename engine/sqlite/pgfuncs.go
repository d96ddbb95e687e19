package sqlite

import (
	"crypto/md5"
	"crypto/rand"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"
)

// PostgreSQL functions that drivers, tools and applications call and
// SQLite lacks. They run only where a statement runs (on the node that
// executes it): a write stores their result values, which is what
// replicates.
var pgFunctions = map[string]func() sqlite.Value{
	// The same release pgwire reports as server_version.
	"version":          func() sqlite.Value { return sqlite.TextValue("PostgreSQL 15.0 (certa) on SQLite " + sqliteVersion) },
	"current_database": func() sqlite.Value { return sqlite.TextValue("certa") },
	"current_schema":   func() sqlite.Value { return sqlite.TextValue("public") },
	"now": func() sqlite.Value {
		return sqlite.TextValue(time.Now().UTC().Format("2006-01-02 15:04:05.999999") + "+00")
	},
	"gen_random_uuid": func() sqlite.Value {
		var b [16]byte
		rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40 // version 4
		b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
		return sqlite.TextValue(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
	},
}

// sqliteVersion is the SQLite library's version, for version().
const sqliteVersion = sqlite.Version

func registerPGFunctions(c *sqlite.Conn) error {
	for name, fn := range pgFunctions {
		err := c.CreateFunction(name, &sqlite.FunctionImpl{
			NArgs:         0,
			AllowIndirect: true, // column defaults: DEFAULT (now())
			Scalar:        func(sqlite.Context, []sqlite.Value) (sqlite.Value, error) { return fn(), nil },
		})
		if err != nil {
			return fmt.Errorf("register %s(): %w", name, err)
		}
	}
	// md5(text or bytea): the hex digest, as PostgreSQL's.
	return c.CreateFunction("md5", &sqlite.FunctionImpl{
		NArgs:         1,
		Deterministic: true,
		AllowIndirect: true,
		Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if args[0].Type() == sqlite.TypeNull {
				return sqlite.Value{}, nil
			}
			return sqlite.TextValue(fmt.Sprintf("%x", md5.Sum(args[0].Blob()))), nil
		},
	})
}
