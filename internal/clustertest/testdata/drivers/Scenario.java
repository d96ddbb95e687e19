// The driver scenario for PgJDBC: java -cp postgresql.jar Scenario.java A B,
// A and B being host:port of two certa nodes. Exits non-zero on failure.
import java.math.BigDecimal;
import java.sql.*;
import java.time.*;
import java.util.Arrays;
import java.util.UUID;
import org.postgresql.PGConnection;

public class Scenario {
    static Connection connect(String addr) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://" + addr + "/certa?sslmode=disable", "certa",
            System.getenv("CERTA_PASSWORD"));
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    public static void main(String[] args) throws Exception {
        Connection a = connect(args[0]), b = connect(args[1]);
        try (Statement st = a.createStatement()) {
            st.execute("CREATE TABLE java_typed (id bigint PRIMARY KEY, i integer, f double precision, b boolean, s text,"
                + " by bytea, n numeric(10,2), d date, ts timestamp, tz timestamptz, u uuid)");
        }
        String insert = "INSERT INTO java_typed (id, i, f, b, s, by, n, d, ts, tz, u) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        OffsetDateTime tz = OffsetDateTime.of(2026, 11, 21, 10, 11, 12, 345678000, ZoneOffset.UTC);
        UUID u = UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        try (PreparedStatement ps = a.prepareStatement(insert)) {
            ps.setLong(1, 1); ps.setInt(2, 42); ps.setDouble(3, 1.5); ps.setBoolean(4, true); ps.setString(5, "text");
            ps.setBytes(6, new byte[] {0, 1, (byte) 255}); ps.setBigDecimal(7, new BigDecimal("12.50"));
            ps.setObject(8, LocalDate.of(2026, 11, 21)); ps.setObject(9, LocalDateTime.of(2026, 11, 21, 10, 11, 12));
            ps.setObject(10, tz); ps.setObject(11, u);
            ps.executeUpdate();
            ps.setLong(1, 2);
            for (int k = 2; k <= 11; k++) ps.setNull(k, Types.NULL);
            ps.executeUpdate();
        }
        try (Statement st = b.createStatement()) {
            st.execute("SET certa.consistency = 'sync'");
        }
        try (PreparedStatement ps = b.prepareStatement("SELECT id, i, f, b, s, by, n, d, ts, tz, u FROM java_typed WHERE id = ?")) {
            ps.setLong(1, 1);
            ResultSet rs = ps.executeQuery();
            check(rs.next(), "row 1 missing");
            check(rs.getLong(1) == 1 && rs.getInt(2) == 42 && rs.getDouble(3) == 1.5 && rs.getBoolean(4), "numbers and bool");
            check(rs.getString(5).equals("text") && Arrays.equals(rs.getBytes(6), new byte[] {0, 1, (byte) 255}), "text and bytea");
            check(rs.getBigDecimal(7).compareTo(new BigDecimal("12.5")) == 0, "numeric " + rs.getBigDecimal(7));
            check(rs.getObject(8, LocalDate.class).equals(LocalDate.of(2026, 11, 21)), "date " + rs.getString(8));
            check(rs.getObject(9, LocalDateTime.class).equals(LocalDateTime.of(2026, 11, 21, 10, 11, 12)), "timestamp " + rs.getString(9));
            check(rs.getObject(10, OffsetDateTime.class).isEqual(tz), "timestamptz " + rs.getString(10));
            check(rs.getObject(11, UUID.class).equals(u), "uuid " + rs.getString(11));
            ps.setLong(1, 2);
            rs = ps.executeQuery();
            check(rs.next(), "row 2 missing");
            for (int k = 2; k <= 11; k++) check(rs.getObject(k) == null, "NULL row, column " + k + ": " + rs.getObject(k));
        }

        // A prepared statement reused many times (PgJDBC prepares it on the
        // server from the fifth execution on).
        try (PreparedStatement ps = a.prepareStatement("INSERT INTO java_typed (id, s) VALUES (?, ?)")) {
            for (int k = 10; k < 60; k++) {
                ps.setLong(1, k); ps.setString(2, "row " + k);
                ps.executeUpdate();
            }
        }
        try (PreparedStatement ps = a.prepareStatement("SELECT count(*) FROM java_typed WHERE id >= ?")) {
            ps.setLong(1, 10);
            ResultSet rs = ps.executeQuery();
            check(rs.next() && rs.getLong(1) == 50, "count");
        }

        // A transaction that loses to a concurrent commit: 40001, then a retry.
        String update = "UPDATE java_typed SET i = i + ? WHERE id = ?";
        a.setAutoCommit(false);
        try (PreparedStatement ps = a.prepareStatement(update); PreparedStatement pb = b.prepareStatement(update)) {
            ps.setInt(1, 1); ps.setLong(2, 1); ps.executeUpdate();
            pb.setInt(1, 100); pb.setLong(2, 1); pb.executeUpdate();
            try {
                a.commit();
                throw new AssertionError("commit after a concurrent update succeeded");
            } catch (SQLException e) {
                check("40001".equals(e.getSQLState()), "SQLSTATE " + e.getSQLState() + ": " + e.getMessage());
            }
            ps.executeUpdate();
            a.commit();
        }
        a.setAutoCommit(true);
        try (PreparedStatement ps = b.prepareStatement("SELECT i FROM java_typed WHERE id = ?")) {
            ps.setLong(1, 1);
            ResultSet rs = ps.executeQuery();
            check(rs.next() && rs.getInt(1) == 143, "after the retry");
        }
        if ("postgres".equals(System.getenv("CERTA_ENGINE"))) {
            // Over the PostgreSQL engine, types certa has none of come
            // back as PgJDBC makes them from PostgreSQL's: arrays.
            try (Statement st = a.createStatement()) {
                st.execute("CREATE TABLE java_pg (id int PRIMARY KEY, tags text[], nums int[])");
            }
            try (PreparedStatement ps = a.prepareStatement("INSERT INTO java_pg VALUES (?, ?, ?)")) {
                ps.setInt(1, 1);
                ps.setArray(2, a.createArrayOf("text", new String[] {"a", "b c"}));
                ps.setArray(3, a.createArrayOf("int4", new Integer[] {1, 2, 3}));
                ps.executeUpdate();
            }
            try (PreparedStatement ps = b.prepareStatement("SELECT tags, nums FROM java_pg WHERE id = ?")) {
                ps.setInt(1, 1);
                ResultSet rs = ps.executeQuery();
                check(rs.next(), "the row with arrays");
                check(java.util.Arrays.equals((Object[]) rs.getArray(1).getArray(), new String[] {"a", "b c"}), "text[]");
                check(java.util.Arrays.equals((Object[]) rs.getArray(2).getArray(), new Integer[] {1, 2, 3}), "int[]");
            }
        }
        // A statement that never ends, cancelled. A cancel that arrives
        // before the server has read the statement does nothing (as in
        // PostgreSQL), so it is repeated: with the connection's cancelQuery,
        // since Statement.cancel sends one cancel per execution, which can
        // leave before the statement does.
        PGConnection pa = a.unwrap(PGConnection.class);
        try (Statement st = a.createStatement()) {
            Thread canceller = new Thread(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        pa.cancelQuery();
                        Thread.sleep(50);
                    }
                } catch (InterruptedException | SQLException e) {
                    // done
                }
            });
            canceller.start();
            try {
                st.executeQuery("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c");
                throw new AssertionError("the endless statement returned");
            } catch (SQLException e) {
                check("57014".equals(e.getSQLState()), "SQLSTATE " + e.getSQLState() + ": " + e.getMessage());
            } finally {
                canceller.interrupt();
                canceller.join();
            }
            ResultSet rs = st.executeQuery("SELECT count(*) FROM java_typed");
            check(rs.next() && rs.getLong(1) == 52, "after the cancel");
        }
        a.close();
        b.close();
        System.out.println("PgJDBC scenario passed");
    }
}
