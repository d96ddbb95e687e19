const { Sequelize, DataTypes } = require('sequelize');
(async () => {
  const db = new Sequelize('certa', 'certa', null, { host: '127.0.0.1', port: 55432, dialect: 'postgres', logging: false });
  const qi = db.getQueryInterface();
  console.log(await qi.showAllTables());
  console.log(await qi.showAllSchemas());
  for (const t of ['author', 'book', 'tag']) {
    console.log(t, JSON.stringify(await qi.describeTable(t)));
    console.log(JSON.stringify(await qi.showIndex(t)));
    console.log(JSON.stringify(await qi.getForeignKeyReferencesForTable(t)));
  }
  console.log(JSON.stringify(await qi.getForeignKeysForTables(['author', 'book', 'tag'])));
  console.log(await db.databaseVersion());
  // Model sync against existing tables (no-op create) and an alter on a model mirroring author
  const Author = db.define('author', { id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true }, name: { type: DataTypes.STRING(100), allowNull: false, unique: true }, born: DataTypes.DATEONLY, rating: { type: DataTypes.DECIMAL(5, 2), defaultValue: 0 }, bio: DataTypes.TEXT }, { tableName: 'author', timestamps: false });
  await Author.sync();
  await db.close();
})().catch((e) => { console.error(e); process.exit(1); });
