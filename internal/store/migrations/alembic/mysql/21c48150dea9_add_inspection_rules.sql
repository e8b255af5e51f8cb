-- 2025.1: built-in inspection rules, in utf8mb3 as upstream made them then;
-- c1fd28861bb9 converts them. Conditions and actions are long JSON.
CREATE TABLE `inspection_rules` (
  `version` VARCHAR(15) NULL,
  `created_at` DATETIME NULL,
  `updated_at` DATETIME NULL,
  `id` INTEGER NOT NULL AUTO_INCREMENT,
  `uuid` VARCHAR(36) NOT NULL,
  `priority` INTEGER NOT NULL,
  `description` VARCHAR(255) NULL,
  `scope` VARCHAR(255) NULL,
  `sensitive` BOOL NULL,
  `phase` VARCHAR(16) NULL,
  `conditions` LONGTEXT NULL,
  `actions` LONGTEXT NOT NULL,
  PRIMARY KEY (`id`),
  CONSTRAINT `uniq_inspection_rules0uuid` UNIQUE (`uuid`),
  INDEX `inspection_rule_scope_idx` (`scope`),
  INDEX `inspection_rule_phase_idx` (`phase`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3;
