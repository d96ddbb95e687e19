import java.sql.*;

public class Meta {
    static int drain(ResultSet rs) throws SQLException {
        int n = 0, cols = rs.getMetaData().getColumnCount();
        while (rs.next()) { for (int i = 1; i <= cols; i++) rs.getObject(i); n++; }
        rs.close();
        return n;
    }
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:55432/certa?user=certa&sslmode=disable")) {
            DatabaseMetaData md = c.getMetaData();
            System.out.println(md.getDatabaseProductVersion() + " " + md.getDriverVersion());
            System.out.println("tables " + drain(md.getTables(null, "public", "%", new String[] {"TABLE", "VIEW"})));
            System.out.println("alltables " + drain(md.getTables(null, null, null, null)));
            System.out.println("schemas " + drain(md.getSchemas()) + " catalogs " + drain(md.getCatalogs()) + " tabletypes " + drain(md.getTableTypes()));
            for (String t : new String[] {"author", "book", "tag"}) {
                System.out.println(t + " cols " + drain(md.getColumns(null, "public", t, "%"))
                    + " pk " + drain(md.getPrimaryKeys(null, "public", t))
                    + " imported " + drain(md.getImportedKeys(null, "public", t))
                    + " exported " + drain(md.getExportedKeys(null, "public", t))
                    + " idx " + drain(md.getIndexInfo(null, "public", t, false, true))
                    + " uniq " + drain(md.getIndexInfo(null, "public", t, true, false)));
            }
            System.out.println("cross " + drain(md.getCrossReference(null, "public", "author", null, "public", "book")));
            System.out.println("typeinfo " + drain(md.getTypeInfo()));
            System.out.println("procs " + drain(md.getProcedures(null, "public", "%")) + " funcs " + drain(md.getFunctions(null, "public", "%")));
            System.out.println("udts " + drain(md.getUDTs(null, "public", "%", null)));
            System.out.println("colpriv " + drain(md.getColumnPrivileges(null, "public", "book", "%")) + " tabpriv " + drain(md.getTablePrivileges(null, "public", "book")));
            System.out.println("bestrow " + drain(md.getBestRowIdentifier(null, "public", "book", DatabaseMetaData.bestRowSession, true)));
            System.out.println("versioncols " + drain(md.getVersionColumns(null, "public", "book")));
            System.out.println(md.getUserName() + " " + md.getURL() + " " + md.getSQLKeywords().length());
            // ResultSetMetaData paths that query the catalog
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT b.*, a.name FROM book b JOIN author a ON a.id = b.author_id")) {
                ResultSetMetaData rm = rs.getMetaData();
                for (int i = 1; i <= rm.getColumnCount(); i++) {
                    System.out.println(rm.getColumnName(i) + " " + rm.getTableName(i) + " " + rm.getSchemaName(i) + " " + rm.isNullable(i) + " " + rm.isAutoIncrement(i) + " " + rm.getColumnTypeName(i) + " " + rm.getPrecision(i) + " " + rm.getScale(i) + " " + rm.getColumnDisplaySize(i) + " " + rm.getColumnClassName(i));
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT * FROM tag WHERE book_id = ?")) {
                ParameterMetaData pm = ps.getParameterMetaData();
                System.out.println("param " + pm.getParameterTypeName(1));
            }
        }
    }
}
