-- 2024.2: runbooks (named step lists a project may run) and their steps.
CREATE TABLE runbooks (
  version VARCHAR(15),
  created_at DATETIME,
  updated_at DATETIME,
  id INTEGER NOT NULL,
  uuid VARCHAR(36),
  name VARCHAR(255) NOT NULL,
  disable_ramdisk BOOLEAN,
  public BOOLEAN,
  owner VARCHAR(255),
  extra TEXT,
  PRIMARY KEY (id),
  CONSTRAINT uniq_runbooks0uuid UNIQUE (uuid),
  CONSTRAINT uniq_runbooks0name UNIQUE (name)
);
CREATE TABLE runbook_steps (
  version VARCHAR(15),
  created_at DATETIME,
  updated_at DATETIME,
  id INTEGER NOT NULL,
  runbook_id INTEGER NOT NULL,
  interface VARCHAR(255) NOT NULL,
  step VARCHAR(255) NOT NULL,
  args TEXT NOT NULL,
  "order" INTEGER NOT NULL,
  PRIMARY KEY (id),
  FOREIGN KEY(runbook_id) REFERENCES runbooks (id)
);
CREATE INDEX runbook_id ON runbook_steps (runbook_id);
CREATE INDEX runbook_steps_interface_idx ON runbook_steps (interface);
CREATE INDEX runbook_steps_step_idx ON runbook_steps (step);
