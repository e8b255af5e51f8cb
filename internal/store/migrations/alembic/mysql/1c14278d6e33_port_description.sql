-- 2025.2: ports get a description.
ALTER TABLE `ports` ADD COLUMN `description` VARCHAR(255) NULL;
