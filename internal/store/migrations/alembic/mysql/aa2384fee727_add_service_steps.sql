-- 2023.2: the step a node in service is running.
ALTER TABLE `nodes` ADD COLUMN `service_step` TEXT NULL;
