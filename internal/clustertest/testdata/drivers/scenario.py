"""The driver scenario for psycopg 3: run as `python3 scenario.py A B`,
A and B being host:port of two certa nodes. Exits non-zero on failure."""
import datetime
import decimal
import os
import sys
import threading
import uuid

import psycopg
from psycopg import errors
from psycopg.types.json import Json, Jsonb


def connect(addr):
    host, port = addr.rsplit(":", 1)
    return psycopg.connect(host=host, port=port, user="certa", password=os.environ["CERTA_PASSWORD"],
                           dbname="certa", sslmode="disable", autocommit=True)


FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def cancel_forever(conn):
    """Runs a statement that never ends and cancels it; a cancel that
    arrives before the statement starts does nothing, so it is repeated."""
    done = threading.Event()

    def canceller():
        while not done.wait(0.05):
            conn.cancel()

    t = threading.Thread(target=canceller)
    t.start()
    try:
        conn.execute(FOREVER)
        raise AssertionError("the endless statement returned")
    except errors.QueryCanceled:
        pass
    finally:
        done.set()
        t.join()


def postgres_types(a, b):
    """Over the PostgreSQL engine, types certa has none of come back as
    psycopg makes them from PostgreSQL: lists, timedeltas, addresses."""
    import ipaddress
    a.execute("CREATE TABLE py_pg (id int PRIMARY KEY, tags text[], nums int[], span interval, addr inet)")
    row = (1, ["a", "b c", None], [1, 2, 3], datetime.timedelta(days=1, seconds=7384), ipaddress.ip_interface("10.0.0.1/24"))
    a.execute("INSERT INTO py_pg VALUES (%s, %s, %s, %s, %s)", row)
    got = b.execute("SELECT id, tags, nums, span, addr FROM py_pg WHERE id = %s", (1,)).fetchone()
    assert tuple(got) == row, f"PostgreSQL types: {got!r}\n want {row!r}"
    # In binary too.
    with b.cursor(binary=True) as cur:
        got = cur.execute("SELECT id, tags, nums, span, addr FROM py_pg WHERE id = %s", (1,)).fetchone()
    assert tuple(got) == row, f"PostgreSQL types in binary: {got!r}\n want {row!r}"


def main(addr_a, addr_b):
    a, b = connect(addr_a), connect(addr_b)
    a.execute("CREATE TABLE py_typed (id bigint PRIMARY KEY, i integer, f double precision, b boolean, s text,"
              " by bytea, n numeric(10,2), d date, ts timestamp, tz timestamptz, u uuid, j json, jb jsonb)")
    tz = datetime.datetime(2026, 11, 21, 10, 11, 12, 345678, tzinfo=datetime.timezone.utc)
    row = (1, 42, 1.5, True, "text", b"\x00\x01\xff", decimal.Decimal("12.50"), datetime.date(2026, 11, 21),
           datetime.datetime(2026, 11, 21, 10, 11, 12), tz, uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
           Json({"a": 1}), Jsonb({"b": [1, 2]}))
    insert = ("INSERT INTO py_typed (id, i, f, b, s, by, n, d, ts, tz, u, j, jb)"
              " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")
    a.execute(insert, row)
    a.execute(insert, (2,) + (None,) * 12)

    b.execute("SET certa.consistency = 'sync'")
    got = b.execute("SELECT id, i, f, b, s, by, n, d, ts, tz, u, j, jb FROM py_typed WHERE id = %s", (1,)).fetchone()
    want = (1, 42, 1.5, True, "text", b"\x00\x01\xff", decimal.Decimal("12.5"), datetime.date(2026, 11, 21),
            datetime.datetime(2026, 11, 21, 10, 11, 12), tz, uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            {"a": 1}, {"b": [1, 2]})
    assert tuple(got) == want, f"row 1: {got!r}\n want {want!r}"
    nulls = b.execute("SELECT i, f, b, s, by, n, d, ts, tz, u, j, jb FROM py_typed WHERE id = %s", (2,)).fetchone()
    assert all(v is None for v in nulls), f"NULL row: {nulls!r}"

    # A prepared statement reused many times.
    for k in range(10, 60):
        a.execute("INSERT INTO py_typed (id, s) VALUES (%s, %s)", (k, f"row {k}"), prepare=True)
    (count,) = a.execute("SELECT count(*) FROM py_typed WHERE id >= %s", (10,)).fetchone()
    assert count == 50, count

    # A transaction that loses to a concurrent commit: 40001, then a retry.
    a.autocommit = False
    a.execute("UPDATE py_typed SET i = i + %s WHERE id = %s", (1, 1))
    b.execute("UPDATE py_typed SET i = i + %s WHERE id = %s", (100, 1))
    try:
        a.commit()
        raise AssertionError("commit after a concurrent update succeeded")
    except errors.SerializationFailure:
        pass
    with a.transaction():
        a.execute("UPDATE py_typed SET i = i + %s WHERE id = %s", (1, 1))
    a.autocommit = True
    (i,) = b.execute("SELECT i FROM py_typed WHERE id = %s", (1,)).fetchone()
    assert i == 143, i

    if os.environ.get("CERTA_ENGINE") == "postgres":
        postgres_types(a, b)

    cancel_forever(a)
    (one,) = a.execute("SELECT %s", (1,)).fetchone()
    assert one == "1" or one == 1, one
    print("psycopg scenario passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
