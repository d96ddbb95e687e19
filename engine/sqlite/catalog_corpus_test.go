package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"testing"

	"certa/internal/catalogcorpus"
	"certa/sqlerr"
)

// Every catalog query of the corpus (what psql, Django, SQLAlchemy,
// Sequelize, TypeORM, Knex, GORM, Hibernate with Flyway, PgJDBC, drizzle
// and pg_dump send, captured from a real PostgreSQL) runs on the corpus's
// schema.
func TestCatalogCorpus(t *testing.T) {
	e := openTest(t, Config{})
	for _, s := range catalogcorpus.Schema {
		e.ddl(s)
	}
	corpus, err := catalogcorpus.Read(filepath.Join("..", "..", "pgparse", "testdata", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, st := range corpus {
		if !catalogcorpus.IsCatalogQuery(st.SQL) {
			continue
		}
		ran++
		err := e.Catalog(context.Background(), st.SQL, &recorder{}, st.Params...)
		var se *sqlerr.Error
		switch {
		case err == nil:
		case errors.As(err, &se) && se.Code == sqlerr.UndefinedTable &&
			!regexp.MustCompile(`"(author|book|tag)\b`).MatchString(se.Message):
			// A relation of the scratch database the tool ran in: the
			// query names it, and PostgreSQL refuses it too.
		default:
			t.Errorf("%s: %v\n%s", st.Tool, err, st.SQL)
		}
	}
	t.Logf("%d catalog queries", ran)
}
