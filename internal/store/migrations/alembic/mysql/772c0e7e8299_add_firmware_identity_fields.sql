-- 2026.2: firmware components record what they are.
ALTER TABLE `firmware_information` ADD COLUMN `vendor` VARCHAR(255) NULL;
ALTER TABLE `firmware_information` ADD COLUMN `model` VARCHAR(255) NULL;
ALTER TABLE `firmware_information` ADD COLUMN `serial_number` VARCHAR(255) NULL;
