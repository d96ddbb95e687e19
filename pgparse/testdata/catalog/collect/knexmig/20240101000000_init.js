exports.up = (knex) => knex.schema.createTable('widget', (t) => { t.increments('id'); t.string('name', 50).notNullable().unique(); t.integer('qty').defaultTo(0); t.timestamps(true, true); });
exports.down = (knex) => knex.schema.dropTable('widget');
