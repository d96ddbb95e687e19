package clustertest

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"certa/internal/catalogcorpus"
	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// The catalog corpus's queries (pgparse/testdata/catalog) on a cluster on
// the embedded engine and on a real PostgreSQL with the same schema: the
// columns (names and types) and rows of each must be PostgreSQL's, oids
// of the schema's objects aside. testdata/catalog_same.txt lists the
// queries that are: each must stay so (-update-catalog rewrites the list
// from this run). The others are logged; pg_dump's, drizzle's and PgJDBC's
// are left out (TestCatalogCorpus in engine/sqlite: some are refused).
func TestCatalogAgainstPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The reference is database certa of user certa, as on the cluster.
	pg := referencePostgres(t)
	ref, err := pgclient.ConnectExtended(ctx, fmt.Sprintf("postgres://certa@127.0.0.1:%d/certa?sslmode=disable", pg.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	writer, reader := c.Conn(0), syncConn(t, c, 1)
	for _, sql := range catalogcorpus.Schema {
		mustExec(t, writer, sql)
		if _, err := ref.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	corpus, err := catalogcorpus.Read(filepath.Join("..", "..", "pgparse", "testdata", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "catalog_same.txt")
	wantSame := map[string]bool{}
	if b, err := os.ReadFile(golden); err == nil {
		for _, k := range strings.Fields(string(b)) {
			wantSame[k] = true
		}
	}
	var same []string
	differ := 0
	for _, st := range corpus {
		if !catalogcorpus.IsCatalogQuery(st.SQL) || catalogDiffers[st.Tool] {
			continue
		}
		key := fmt.Sprintf("%s:%x", st.Tool, sha256.Sum256([]byte(fmt.Sprint(st.SQL, st.Params))))[:len(st.Tool)+13]
		got, want := catalogOutcome(ctx, reader, st), catalogOutcome(ctx, ref, st)
		switch {
		case got == want:
			same = append(same, key)
		case wantSame[key]:
			t.Errorf("%s (%s) answers otherwise than PostgreSQL:\n%s\n  certa:      %s\n  PostgreSQL: %s", key, st.Tool, st.SQL, got, want)
		default:
			differ++
			t.Logf("%s:\n%s\n  certa:      %s\n  PostgreSQL: %s", key, st.SQL, got, want)
		}
	}
	t.Logf("%d answered as PostgreSQL does, %d otherwise", len(same), differ)
	if *updateCatalog {
		sort.Strings(same)
		if err := os.WriteFile(golden, []byte(strings.Join(same, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var updateCatalog = flag.Bool("update-catalog", false, "rewrite testdata/catalog_same.txt from this run")

// catalogOutcome is a catalog query's columns (names and types) and rows,
// sorted (most catalog queries leave the order to the server), with the
// oids of the schema's objects, which differ, as OID.
func catalogOutcome(ctx context.Context, c *pgclient.Conn, st catalogcorpus.Statement) string {
	d, err := c.QueryDescribed(ctx, st.SQL, st.Params...)
	if err != nil {
		return "ERROR " + pgclient.SQLState(err)
	}
	var cols []string
	for i, name := range d.Names {
		cols = append(cols, fmt.Sprintf("%s:%d", name, d.OIDs[i]))
	}
	rows := make([]string, len(d.Rows))
	for i, r := range d.Rows {
		rows[i] = oidLike.ReplaceAllString(fmt.Sprint(r), "OID")
	}
	sort.Strings(rows)
	return strings.Join(cols, ",") + " " + strings.Join(rows, " ")
}

// catalogDiffers are the tools whose catalog queries are not compared:
// pg_dump's name the scratch database's own objects (TestPgDumpRestoreSQLite
// checks what pg_dump makes of a cluster instead).
var catalogDiffers = map[string]bool{"pg_dump": true}

// oidLike matches the oids of objects the schema made, which differ.
var oidLike = regexp.MustCompile(`\b1[0-9]{4,5}\b`)
