-- 2026.1: ports may join dynamic portgroups (existing ports may: true).
ALTER TABLE `ports` ADD COLUMN `available_for_dynamic_portgroup` BOOL NOT NULL DEFAULT true;
ALTER TABLE `portgroups` ADD COLUMN `dynamic_portgroup` BOOL NULL;
