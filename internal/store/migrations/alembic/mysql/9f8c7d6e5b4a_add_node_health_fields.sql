-- 2026.1: nodes get a health summary.
ALTER TABLE `nodes` ADD COLUMN `health` VARCHAR(32) NULL;
