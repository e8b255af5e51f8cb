-- 2023.2: allocations lose their foreign keys to nodes and conductors
-- (upstream drops them on MySQL; its SQLite schema, made from the models,
-- has had none since). SQLite cannot drop a constraint, so the table is
-- rebuilt. nodes.allocation_id refers to allocations, so the checks of
-- foreign keys wait for the commit, by which time every allocation is back
-- under its own id.
PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE allocations_copy AS SELECT * FROM allocations;
DROP TABLE allocations;
CREATE TABLE allocations (
  created_at DATETIME,
  updated_at DATETIME,
  version VARCHAR(15),
  id INTEGER NOT NULL,
  uuid VARCHAR(36) NOT NULL,
  name VARCHAR(255),
  node_id INTEGER,
  state VARCHAR(15) NOT NULL,
  owner VARCHAR(255),
  last_error TEXT,
  resource_class VARCHAR(80),
  traits TEXT,
  candidate_nodes TEXT,
  extra TEXT,
  conductor_affinity INTEGER,
  PRIMARY KEY (id),
  CONSTRAINT uniq_allocations0name UNIQUE (name),
  CONSTRAINT uniq_allocations0uuid UNIQUE (uuid)
);
INSERT INTO allocations (created_at, updated_at, version, id, uuid, name, node_id, state, owner, last_error,
  resource_class, traits, candidate_nodes, extra, conductor_affinity)
  SELECT created_at, updated_at, version, id, uuid, name, node_id, state, owner, last_error,
  resource_class, traits, candidate_nodes, extra, conductor_affinity FROM allocations_copy;
DROP TABLE allocations_copy;
