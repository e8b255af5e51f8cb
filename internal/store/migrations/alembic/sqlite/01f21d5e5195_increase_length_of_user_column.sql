-- 2024.1: node_history.user grows from 32 to 64 characters. SQLite cannot
-- change a column's declared type in place, so the table is rebuilt with
-- its rows (nothing references node_history, so dropping it is safe with
-- foreign keys on).
CREATE TABLE node_history_new (
  created_at DATETIME,
  updated_at DATETIME,
  version VARCHAR(15),
  id INTEGER NOT NULL,
  uuid VARCHAR(36) NOT NULL,
  conductor VARCHAR(255),
  event_type VARCHAR(255),
  severity VARCHAR(255),
  event TEXT,
  user VARCHAR(64),
  node_id INTEGER,
  PRIMARY KEY (id),
  CONSTRAINT uniq_history0uuid UNIQUE (uuid),
  FOREIGN KEY(node_id) REFERENCES nodes (id)
);
INSERT INTO node_history_new (created_at, updated_at, version, id, uuid, conductor, event_type, severity, event, user, node_id)
  SELECT created_at, updated_at, version, id, uuid, conductor, event_type, severity, event, user, node_id FROM node_history;
DROP TABLE node_history;
ALTER TABLE node_history_new RENAME TO node_history;
CREATE INDEX history_node_id_idx ON node_history (node_id);
CREATE INDEX history_uuid_idx ON node_history (uuid);
CREATE INDEX history_conductor_idx ON node_history (conductor);
