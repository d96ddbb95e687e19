import sys
from sqlalchemy import create_engine, inspect, MetaData, Table, Column, Integer, String, Text, Index, ForeignKey, UniqueConstraint
from alembic.migration import MigrationContext
from alembic.autogenerate import compare_metadata, produce_migrations, render_python_code

for drv in ["psycopg2", "psycopg"]:
    eng = create_engine(f"postgresql+{drv}://certa@127.0.0.1:55432/certa?sslmode=disable")
    md = MetaData()
    md.reflect(eng)
    print(drv, sorted(md.tables))
    insp = inspect(eng)
    print(insp.get_table_names(), insp.get_view_names(), insp.get_sequence_names(), insp.get_schema_names(), insp.default_schema_name)
    print(insp.has_table("author"), insp.has_table("nosuch"), insp.has_sequence("book_id_seq"), insp.has_index("book", "book_title_idx"), insp.has_schema("public"))
    for t in ["author", "book", "tag"]:
        print(t, insp.get_columns(t))
        print(insp.get_pk_constraint(t), insp.get_foreign_keys(t), insp.get_indexes(t), insp.get_unique_constraints(t), insp.get_check_constraints(t), insp.get_table_comment(t))
    print(insp.get_materialized_view_names(), insp.get_temp_table_names(), insp.get_enums(), insp.get_domains() if hasattr(insp, "get_domains") else None)
    print(insp.get_multi_columns())
    # Reflect with a fresh metadata via Table autoload
    Table("book", MetaData(), autoload_with=eng)
    # Alembic autogenerate against a metadata that differs from the db
    target = MetaData()
    Table("author", target, Column("id", Integer, primary_key=True), Column("name", String(120), nullable=False, unique=True), Column("email", String(200)), Column("bio", Text))
    Table("book", target, Column("id", Integer, primary_key=True), Column("author_id", Integer, ForeignKey("author.id"), nullable=False), Column("title", String(200), nullable=False), Index("book_title_idx2", "title"))
    Table("publisher", target, Column("id", Integer, primary_key=True), Column("name", String(50)), UniqueConstraint("name"))
    with eng.connect() as conn:
        mc = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
        diff = compare_metadata(mc, target)
        print(len(diff), "diffs")
        print(render_python_code(produce_migrations(mc, target).upgrade_ops))
    eng.dispose()
