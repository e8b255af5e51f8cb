-- 2026.1: portgroups get a physical network.
ALTER TABLE portgroups ADD COLUMN physical_network VARCHAR(64);
