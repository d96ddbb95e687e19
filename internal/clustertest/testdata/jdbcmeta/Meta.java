import java.sql.*;

/** Prints what PgJDBC's DatabaseMetaData says of the shop schema's tables
 * (primary keys, indexes, foreign keys, columns), one line each, for
 * TestJDBCMetadataSQLite to compare between certa and PostgreSQL.
 * Arguments: JDBC URL, user. */
public class Meta {
  public static void main(String[] a) throws Exception {
    try (Connection c = DriverManager.getConnection(a[0], a[1], "")) {
      DatabaseMetaData m = c.getMetaData();
      for (String t : new String[]{"customers", "orders", "tags", "log"}) {
        try (ResultSet r = m.getPrimaryKeys(null, "public", t)) {
          while (r.next()) System.out.println("pk " + t + " " + r.getString("COLUMN_NAME") + " " + r.getInt("KEY_SEQ") + " " + r.getString("PK_NAME"));
        }
        try (ResultSet r = m.getIndexInfo(null, "public", t, false, false)) {
          while (r.next()) System.out.println("index " + t + " " + r.getString("INDEX_NAME") + " non-unique=" + r.getBoolean("NON_UNIQUE") + " " + r.getInt("ORDINAL_POSITION") + " " + r.getString("COLUMN_NAME"));
        }
        try (ResultSet r = m.getImportedKeys(null, "public", t)) {
          while (r.next()) System.out.println("fk " + t + "." + r.getString("FKCOLUMN_NAME") + " -> " + r.getString("PKTABLE_NAME") + "." + r.getString("PKCOLUMN_NAME") + " " + r.getInt("KEY_SEQ") + " " + r.getString("FK_NAME"));
        }
        try (ResultSet r = m.getColumns(null, "public", t, "%")) {
          while (r.next()) System.out.println("column " + t + "." + r.getString("COLUMN_NAME") + " " + r.getString("TYPE_NAME") + " " + r.getInt("NULLABLE") + " " + r.getString("IS_AUTOINCREMENT"));
        }
      }
    }
  }
}
