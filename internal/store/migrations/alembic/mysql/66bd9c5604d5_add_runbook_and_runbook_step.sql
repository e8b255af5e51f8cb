-- 2024.2: runbooks (named step lists a project may run) and their steps,
-- in utf8mb3 as upstream made them then; c1fd28861bb9 converts them.
CREATE TABLE `runbooks` (
  `version` VARCHAR(15) NULL,
  `created_at` DATETIME NULL,
  `updated_at` DATETIME NULL,
  `id` INTEGER NOT NULL AUTO_INCREMENT,
  `uuid` VARCHAR(36) NULL,
  `name` VARCHAR(255) NOT NULL,
  `disable_ramdisk` BOOL NULL,
  `public` BOOL NULL,
  `owner` VARCHAR(255) NULL,
  `extra` TEXT NULL,
  PRIMARY KEY (`id`),
  CONSTRAINT `uniq_runbooks0uuid` UNIQUE (`uuid`),
  CONSTRAINT `uniq_runbooks0name` UNIQUE (`name`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
CREATE TABLE `runbook_steps` (
  `version` VARCHAR(15) NULL,
  `created_at` DATETIME NULL,
  `updated_at` DATETIME NULL,
  `id` INTEGER NOT NULL AUTO_INCREMENT,
  `runbook_id` INTEGER NOT NULL,
  `interface` VARCHAR(255) NOT NULL,
  `step` VARCHAR(255) NOT NULL,
  `args` TEXT NOT NULL,
  `order` INTEGER NOT NULL,
  PRIMARY KEY (`id`),
  FOREIGN KEY (`runbook_id`) REFERENCES `runbooks` (`id`),
  INDEX `runbook_id` (`runbook_id`),
  INDEX `runbook_steps_interface_idx` (`interface`),
  INDEX `runbook_steps_step_idx` (`step`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
