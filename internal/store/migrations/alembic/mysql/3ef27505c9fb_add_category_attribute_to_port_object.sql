-- 2025.2: ports get a category.
ALTER TABLE `ports` ADD COLUMN `category` VARCHAR(80) NULL;
