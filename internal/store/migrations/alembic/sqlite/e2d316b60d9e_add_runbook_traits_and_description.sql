-- 2026.2: runbooks get a description and traits.
ALTER TABLE runbooks ADD COLUMN description VARCHAR(255);
CREATE TABLE runbook_traits (
  version VARCHAR(15),
  created_at DATETIME,
  updated_at DATETIME,
  runbook_id INTEGER NOT NULL,
  trait VARCHAR(255) NOT NULL,
  PRIMARY KEY (runbook_id, trait),
  FOREIGN KEY(runbook_id) REFERENCES runbooks (id)
);
CREATE INDEX runbook_traits_idx ON runbook_traits (trait);
