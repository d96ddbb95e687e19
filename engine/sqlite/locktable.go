package sqlite

import (
	"certa/result"
	"certa/sqlerr"
)

// lockTable answers LOCK TABLE in mode. ACCESS SHARE, the lock every read
// takes, only keeps the tables from being dropped or altered while the
// transaction reads them: its SQLite snapshot already holds their schema
// as it was (pg_dump locks every table it dumps so). Stronger modes block
// other writers, which certa cannot do across nodes: refused. The tables
// must exist, as PostgreSQL checks. tx.mu is held.
func (tx *Tx) lockTable(mode string, tables []string, w result.Writer) error {
	if err := tx.checkTablesExist(tables); err != nil {
		return err
	}
	if mode != "ACCESS SHARE" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "LOCK TABLE IN %s MODE is not supported: certa cannot block the writers of other nodes (only ACCESS SHARE, which reads take, is)", mode)
	}
	return w.Complete("LOCK TABLE")
}
