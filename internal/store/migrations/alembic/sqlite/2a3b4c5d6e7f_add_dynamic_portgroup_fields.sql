-- 2026.1: ports may join dynamic portgroups (existing ports may: true).
ALTER TABLE ports ADD COLUMN available_for_dynamic_portgroup BOOLEAN DEFAULT (1) NOT NULL;
ALTER TABLE portgroups ADD COLUMN dynamic_portgroup BOOLEAN;
