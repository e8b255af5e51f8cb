-- 2024.1: node_history.user grows from 32 to 64 characters.
ALTER TABLE `node_history` MODIFY `user` VARCHAR(64) NULL;
