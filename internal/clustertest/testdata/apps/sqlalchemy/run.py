"""The SQLAlchemy scenario: SQLAlchemy 2's ORM with Alembic autogenerate,
upgrade and downgrade (DDL inside transaction blocks), writing through
NODE_A and reading through NODE_B (host:port each). Exits non-zero on
failure."""
import decimal
import os
import sys
import tempfile

from alembic import command
from alembic.config import Config
from sqlalchemy import ForeignKey, Numeric, String, create_engine, event, inspect, select, text
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship


def url(addr):
    # SQLALCHEMY_DRIVER: psycopg (3, the default) or psycopg2.
    driver = os.environ.get("SQLALCHEMY_DRIVER", "psycopg")
    return f"postgresql+{driver}://certa@{addr}/certa?sslmode=disable"


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customer"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(50))
    orders: Mapped[list["Order"]] = relationship(back_populates="customer", cascade="all, delete-orphan")


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[int] = mapped_column(primary_key=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customer.id"))
    total: Mapped[decimal.Decimal] = mapped_column(Numeric(10, 2))
    customer: Mapped[Customer] = relationship(back_populates="orders")


ENV = '''
from alembic import context
from sqlalchemy import create_engine
import __main__ as run
def run_migrations_online():
    engine = create_engine(context.config.get_main_option("sqlalchemy.url"))
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=run.Base.metadata, transaction_per_migration=True)
        with context.begin_transaction():
            context.run_migrations()
run_migrations_online()
'''


def main():
    a_url, b_url = url(os.environ["NODE_A"]), url(os.environ["NODE_B"])
    work = tempfile.mkdtemp()
    cfg = Config(os.path.join(work, "alembic.ini"))
    cfg.set_main_option("script_location", os.path.join(work, "migrations"))
    cfg.set_main_option("sqlalchemy.url", a_url)
    command.init(cfg, os.path.join(work, "migrations"))
    with open(os.path.join(work, "migrations", "env.py"), "w") as f:
        f.write(ENV)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    command.revision(cfg, message="initial", autogenerate=True)
    command.upgrade(cfg, "head")

    a = create_engine(a_url)
    b = create_engine(b_url)

    @event.listens_for(b, "connect")
    def sync(dbapi_conn, _):
        with dbapi_conn.cursor() as c:
            c.execute("SET certa.consistency = 'sync'")
        dbapi_conn.commit()

    assert set(inspect(b).get_table_names()) >= {"customer", "orders", "alembic_version"}, inspect(b).get_table_names()
    with Session(a) as s, s.begin():
        c = Customer(name="ann", orders=[Order(total=decimal.Decimal("10.50")), Order(total=decimal.Decimal("2.25"))])
        s.add(c)
    with Session(b) as s:
        c = s.scalars(select(Customer).where(Customer.name == "ann")).one()
        assert sorted(o.total for o in c.orders) == [decimal.Decimal("2.25"), decimal.Decimal("10.50")], c.orders
    with Session(a) as s, s.begin():
        s.delete(s.scalars(select(Customer)).one())
    with Session(b) as s:
        assert s.scalar(text("SELECT count(*) FROM orders")) == 0

    # A second revision adds a column; autogenerate sees it from the model.
    Customer.__table__.append_column(__import__("sqlalchemy").Column("email", String(100), nullable=True))
    command.revision(cfg, message="email", autogenerate=True)
    command.upgrade(cfg, "head")
    assert "email" in [c["name"] for c in inspect(b).get_columns("customer")]
    command.downgrade(cfg, "base")
    b.dispose()
    assert "customer" not in inspect(b).get_table_names(), inspect(b).get_table_names()
    print("sqlalchemy scenario passed")


if __name__ == "__main__":
    main()
