select version();
-- next
-- params: ["knex_migrations"]
select * from information_schema.tables where table_name = $1 and table_schema = current_schema()
-- next
-- params: ["knex_migrations_lock"]
select * from information_schema.tables where table_name = $1 and table_schema = current_schema()
-- next
-- params: ["widget"]
select * from information_schema.tables where table_name = $1 and table_schema = current_schema()
-- next
-- params: ["widget","qty"]
select * from information_schema.columns where table_name = $1 and column_name = $2 and table_schema = current_schema()
-- next
-- params: ["widget"]
select * from information_schema.columns where table_name = $1 and table_catalog = current_database() and table_schema = current_schema()
-- next
-- params: ["author"]
select * from information_schema.tables where table_name = $1 and table_schema = current_schema()
-- next
-- params: ["author","title"]
select * from information_schema.columns where table_name = $1 and column_name = $2 and table_schema = current_schema()
-- next
-- params: ["author"]
select * from information_schema.columns where table_name = $1 and table_catalog = current_database() and table_schema = current_schema()
-- next
-- params: ["book"]
select * from information_schema.tables where table_name = $1 and table_schema = current_schema()
-- next
-- params: ["book","title"]
select * from information_schema.columns where table_name = $1 and column_name = $2 and table_schema = current_schema()
-- next
-- params: ["book"]
select * from information_schema.columns where table_name = $1 and table_catalog = current_database() and table_schema = current_schema()
-- next
-- params: ["tag"]
select * from information_schema.tables where table_name = $1 and table_schema = current_schema()
-- next
-- params: ["tag","title"]
select * from information_schema.columns where table_name = $1 and column_name = $2 and table_schema = current_schema()
-- next
-- params: ["tag"]
select * from information_schema.columns where table_name = $1 and table_catalog = current_database() and table_schema = current_schema()
-- next
-- params: ["nosuch"]
select * from information_schema.tables where table_name = $1 and table_schema = current_schema()
