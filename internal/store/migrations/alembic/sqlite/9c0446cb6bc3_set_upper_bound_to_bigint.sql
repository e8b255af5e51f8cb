-- 2026.1: BIOS setting bounds become 64-bit. SQLite cannot change a
-- column's declared type in place, so the table is rebuilt with its rows
-- (nothing references bios_settings).
CREATE TABLE bios_settings_new (
  created_at DATETIME,
  updated_at DATETIME,
  version VARCHAR(15),
  node_id INTEGER NOT NULL,
  name VARCHAR(255) NOT NULL,
  value TEXT,
  attribute_type VARCHAR(255),
  allowable_values TEXT,
  lower_bound BIGINT,
  max_length INTEGER,
  min_length INTEGER,
  read_only BOOLEAN,
  reset_required BOOLEAN,
  "unique" BOOLEAN,
  upper_bound BIGINT,
  PRIMARY KEY (node_id, name),
  FOREIGN KEY(node_id) REFERENCES nodes (id)
);
INSERT INTO bios_settings_new (created_at, updated_at, version, node_id, name, value, attribute_type, allowable_values,
  lower_bound, max_length, min_length, read_only, reset_required, "unique", upper_bound)
  SELECT created_at, updated_at, version, node_id, name, value, attribute_type, allowable_values,
  lower_bound, max_length, min_length, read_only, reset_required, "unique", upper_bound FROM bios_settings;
DROP TABLE bios_settings;
ALTER TABLE bios_settings_new RENAME TO bios_settings;
