-- 2026.2: history events record the project that caused them.
ALTER TABLE `node_history` ADD COLUMN `project` VARCHAR(80) NULL;
