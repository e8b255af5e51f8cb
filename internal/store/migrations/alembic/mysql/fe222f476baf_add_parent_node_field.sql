-- 2023.2: a node may name its parent node.
ALTER TABLE `nodes` ADD COLUMN `parent_node` VARCHAR(36) NULL;
CREATE INDEX `parent_node_idx` ON `nodes` (`parent_node`);
