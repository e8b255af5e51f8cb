-- 2026.2: runbooks get a description and traits. Upstream names only the
-- charset of the new table, so its collation is the server's default for
-- utf8mb4; it is pinned here to the one upstream's schema shows.
ALTER TABLE `runbooks` ADD COLUMN `description` VARCHAR(255) NULL;
CREATE TABLE `runbook_traits` (
  `version` VARCHAR(15) NULL,
  `created_at` DATETIME NULL,
  `updated_at` DATETIME NULL,
  `runbook_id` INTEGER NOT NULL,
  `trait` VARCHAR(255) NOT NULL,
  PRIMARY KEY (`runbook_id`, `trait`),
  FOREIGN KEY (`runbook_id`) REFERENCES `runbooks` (`id`),
  INDEX `runbook_traits_idx` (`trait`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
