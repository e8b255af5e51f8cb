-- 2024.2: a node may forbid powering it off; existing nodes get false.
ALTER TABLE nodes ADD COLUMN disable_power_off BOOLEAN DEFAULT (0);
