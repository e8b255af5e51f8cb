-- 2026.2: history events record the node's state and how long it lasted.
ALTER TABLE `node_history` ADD COLUMN `state` VARCHAR(255) NULL;
ALTER TABLE `node_history` ADD COLUMN `target_provision_state` VARCHAR(255) NULL;
ALTER TABLE `node_history` ADD COLUMN `duration_seconds` INTEGER NULL;
