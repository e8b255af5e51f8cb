-- 2025.1: built-in inspection rules.
CREATE TABLE inspection_rules (
  version VARCHAR(15),
  created_at DATETIME,
  updated_at DATETIME,
  id INTEGER NOT NULL,
  uuid VARCHAR(36) NOT NULL,
  priority INTEGER NOT NULL,
  description VARCHAR(255),
  scope VARCHAR(255),
  sensitive BOOLEAN,
  phase VARCHAR(16),
  conditions TEXT,
  actions TEXT NOT NULL,
  PRIMARY KEY (id),
  CONSTRAINT uniq_inspection_rules0uuid UNIQUE (uuid)
);
CREATE INDEX inspection_rule_scope_idx ON inspection_rules (scope);
CREATE INDEX inspection_rule_phase_idx ON inspection_rules (phase);
