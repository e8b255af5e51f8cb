-- 2025.2: ports get a vendor.
ALTER TABLE ports ADD COLUMN vendor VARCHAR(32);
