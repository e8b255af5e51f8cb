-- 2023.2: the firmware interface and the firmware components it reports.
-- Created in utf8mb3 as upstream did then; c1fd28861bb9 converts it.
ALTER TABLE `nodes` ADD COLUMN `firmware_interface` VARCHAR(255) NULL;
CREATE TABLE `firmware_information` (
  `created_at` DATETIME NULL,
  `updated_at` DATETIME NULL,
  `id` INTEGER NOT NULL AUTO_INCREMENT,
  `node_id` INTEGER NOT NULL,
  `component` VARCHAR(255) NOT NULL,
  `initial_version` VARCHAR(255) NOT NULL,
  `current_version` VARCHAR(255) NULL,
  `last_version_flashed` VARCHAR(255) NULL,
  `version` VARCHAR(15) NULL,
  PRIMARY KEY (`id`),
  CONSTRAINT `uniq_nodecomponent0node_id0component` UNIQUE (`node_id`, `component`),
  FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
