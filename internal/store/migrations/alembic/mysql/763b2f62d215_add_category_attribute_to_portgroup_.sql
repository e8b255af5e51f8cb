-- 2026.1: portgroups get a category.
ALTER TABLE `portgroups` ADD COLUMN `category` VARCHAR(80) NULL;
