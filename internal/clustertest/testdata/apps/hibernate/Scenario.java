// The Hibernate 6 and Flyway scenario: Flyway migrates (V1 creates tables
// with a sequence and a foreign key, V2 adds a column and fills it, each in
// a transaction), then Hibernate maps the tables, writes through NODE_A
// and reads through NODE_B (host:port each). Run: java -cp 'jars/*' Scenario.java <migrations dir>. Exits
// non-zero on failure.
import jakarta.persistence.*;
import java.math.BigDecimal;
import java.util.*;
import org.flywaydb.core.Flyway;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;

public class Scenario {
    @Entity(name = "Customer")
    @Table(name = "customer")
    public static class Customer {
        @Id @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "customer_seq")
        @SequenceGenerator(name = "customer_seq", sequenceName = "customer_seq", allocationSize = 1)
        Long id;
        String name;
        String tier;
        @OneToMany(mappedBy = "customer", cascade = CascadeType.ALL, orphanRemoval = true)
        List<Invoice> invoices = new ArrayList<>();
    }

    @Entity(name = "Invoice")
    @Table(name = "invoice")
    public static class Invoice {
        @Id @GeneratedValue(strategy = GenerationType.IDENTITY)
        Long id;
        @ManyToOne(optional = false) @JoinColumn(name = "customer_id")
        Customer customer;
        @Column(precision = 10, scale = 2)
        BigDecimal amount;
    }

    static String url(String addr) {
        return "jdbc:postgresql://" + addr + "/certa?user=certa&sslmode=disable";
    }

    static SessionFactory factory(String addr) {
        // Hibernate loads the entity classes by name: from the loader that
        // compiled this file (the source launcher's).
        Thread.currentThread().setContextClassLoader(Scenario.class.getClassLoader());
        return new Configuration()
            .setProperty("hibernate.connection.url", url(addr))
            .setProperty("hibernate.hbm2ddl.auto", "none") // validate would find sequences stepping by 128x their increment (certa interleaves them by node)
            .setProperty("hibernate.show_sql", "false")
            .addAnnotatedClass(Customer.class).addAnnotatedClass(Invoice.class)
            .buildSessionFactory();
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    public static void main(String[] args) throws Exception {
        String a = System.getenv("NODE_A"), b = System.getenv("NODE_B");
        Flyway.configure().dataSource(url(a), null, null).locations("filesystem:" + args[0]).load().migrate();

        SessionFactory fa = factory(a), fb = factory(b);
        Long id;
        try (var s = fa.openSession()) {
            var tx = s.beginTransaction();
            var c = new Customer();
            c.name = "ann";
            for (String amt : new String[] {"10.50", "2.25"}) {
                var inv = new Invoice();
                inv.customer = c;
                inv.amount = new BigDecimal(amt);
                c.invoices.add(inv);
            }
            s.persist(c);
            tx.commit();
            id = c.id;
        }
        try (var s = fa.openSession()) {
            var tx = s.beginTransaction();
            s.createMutationQuery("update Customer set tier = 'gold' where id = :id").setParameter("id", id).executeUpdate();
            tx.commit();
        }
        try (var s = fb.openSession()) {
            s.doWork(c -> c.createStatement().execute("SET certa.consistency = 'sync'"));
            var c = s.get(Customer.class, id);
            check(c != null && "gold".equals(c.tier), "customer read through B: " + (c == null ? null : c.tier));
            var total = c.invoices.stream().map(i -> i.amount).reduce(BigDecimal.ZERO, BigDecimal::add);
            check(total.compareTo(new BigDecimal("12.75")) == 0, "invoices total " + total);
            Long legacy = s.createNativeQuery("SELECT count(*) FROM customer WHERE tier = 'basic'", Long.class).getSingleResult();
            check(legacy == 1, "the row V2 filled: " + legacy);
        }
        try (var s = fa.openSession()) {
            var tx = s.beginTransaction();
            s.remove(s.get(Customer.class, id));
            tx.commit();
        }
        try (var s = fb.openSession()) {
            s.doWork(c -> c.createStatement().execute("SET certa.consistency = 'sync'"));
            Long n = s.createQuery("select count(i) from Invoice i", Long.class).getSingleResult();
            check(n == 0, "invoices left: " + n);
        }
        fa.close();
        fb.close();
        System.out.println("hibernate scenario passed");
    }
}
