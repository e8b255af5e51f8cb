-- The change stream (docs/changes.md): one row per change to a node, port,
-- portgroup, allocation or conductor, written in the transaction of the
-- change itself. Tables of ours only; upstream's are untouched.
--
-- seq comes from openkeel_change_seq's single row, incremented in that
-- same transaction: the row lock is held to the commit, so seq order is
-- commit order and no reader sees seq n+1 before n. An AUTO_INCREMENT
-- would be allocated at insert time and could commit out of order.

CREATE TABLE openkeel_changes (
  seq BIGINT NOT NULL,
  created_at DATETIME NOT NULL,
  resource VARCHAR(16) NOT NULL,
  action VARCHAR(16) NOT NULL,
  uuid VARCHAR(255) NOT NULL,
  node_uuid VARCHAR(36),
  changed TEXT,
  provision_state VARCHAR(15),
  conductor_group VARCHAR(255),
  shard VARCHAR(255),
  owner VARCHAR(255),
  lessee VARCHAR(255),
  PRIMARY KEY (seq)
);

CREATE INDEX openkeel_changes_created_at_idx ON openkeel_changes (created_at);

CREATE TABLE openkeel_change_seq (
  id INTEGER NOT NULL,
  seq BIGINT NOT NULL,
  PRIMARY KEY (id)
);

INSERT INTO openkeel_change_seq (id, seq) VALUES (1, 0);
