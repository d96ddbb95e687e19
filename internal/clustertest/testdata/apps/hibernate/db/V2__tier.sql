ALTER TABLE customer ADD COLUMN tier varchar(255);
UPDATE customer SET tier = 'basic';
