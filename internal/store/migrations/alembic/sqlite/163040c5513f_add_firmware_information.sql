-- 2023.2: the firmware interface and the firmware components it reports.
ALTER TABLE nodes ADD COLUMN firmware_interface VARCHAR(255);
CREATE TABLE firmware_information (
  created_at DATETIME,
  updated_at DATETIME,
  id INTEGER NOT NULL,
  node_id INTEGER NOT NULL,
  component VARCHAR(255) NOT NULL,
  initial_version VARCHAR(255) NOT NULL,
  current_version VARCHAR(255),
  last_version_flashed VARCHAR(255),
  version VARCHAR(15),
  PRIMARY KEY (id),
  CONSTRAINT uniq_nodecomponent0node_id0component UNIQUE (node_id, component),
  FOREIGN KEY(node_id) REFERENCES nodes (id)
);
