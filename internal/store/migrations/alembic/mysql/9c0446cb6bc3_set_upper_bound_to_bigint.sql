-- 2026.1: BIOS setting bounds become 64-bit.
ALTER TABLE `bios_settings` MODIFY `upper_bound` BIGINT NULL;
ALTER TABLE `bios_settings` MODIFY `lower_bound` BIGINT NULL;
