-- 2026.1: nodes get the name of their instance.
ALTER TABLE nodes ADD COLUMN instance_name VARCHAR(255);
