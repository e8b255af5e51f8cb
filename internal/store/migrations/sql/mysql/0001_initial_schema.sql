-- Ironic's schema at its Alembic head 9fb44677ef15, for MariaDB/MySQL.
-- Names, types, defaults, keys and table options are upstream's exactly (an
-- upstream Ironic must be able to use this database, and we must be able to
-- take over one it created); tables are ordered so that every foreign key
-- refers to a table created before it.

CREATE TABLE `alembic_version` (
  `version_num` varchar(32) NOT NULL,
  PRIMARY KEY (`version_num`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

CREATE TABLE `allocations` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) NOT NULL,
  `name` varchar(255) DEFAULT NULL,
  `node_id` int(11) DEFAULT NULL,
  `state` varchar(15) NOT NULL,
  `last_error` text DEFAULT NULL,
  `resource_class` varchar(80) DEFAULT NULL,
  `traits` text DEFAULT NULL,
  `candidate_nodes` text DEFAULT NULL,
  `extra` text DEFAULT NULL,
  `conductor_affinity` int(11) DEFAULT NULL,
  `owner` varchar(255) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_allocations0name` (`name`),
  UNIQUE KEY `uniq_allocations0uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `chassis` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `extra` text DEFAULT NULL,
  `description` varchar(255) DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_chassis0uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `conductors` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `hostname` varchar(255) NOT NULL,
  `drivers` text DEFAULT NULL,
  `online` tinyint(1) DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  `conductor_group` varchar(255) NOT NULL DEFAULT '',
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_conductors0hostname` (`hostname`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `nodes` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `instance_uuid` varchar(36) DEFAULT NULL,
  `chassis_id` int(11) DEFAULT NULL,
  `power_state` varchar(15) DEFAULT NULL,
  `target_power_state` varchar(15) DEFAULT NULL,
  `provision_state` varchar(15) DEFAULT NULL,
  `target_provision_state` varchar(15) DEFAULT NULL,
  `last_error` text DEFAULT NULL,
  `properties` text DEFAULT NULL,
  `driver` varchar(255) DEFAULT NULL,
  `driver_info` text DEFAULT NULL,
  `reservation` varchar(255) DEFAULT NULL,
  `maintenance` tinyint(1) DEFAULT NULL,
  `extra` text DEFAULT NULL,
  `provision_updated_at` datetime DEFAULT NULL,
  `console_enabled` tinyint(1) DEFAULT NULL,
  `instance_info` longtext DEFAULT NULL,
  `conductor_affinity` int(11) DEFAULT NULL,
  `maintenance_reason` text DEFAULT NULL,
  `driver_internal_info` text DEFAULT NULL,
  `name` varchar(255) DEFAULT NULL,
  `inspection_started_at` datetime DEFAULT NULL,
  `inspection_finished_at` datetime DEFAULT NULL,
  `clean_step` text DEFAULT NULL,
  `raid_config` text DEFAULT NULL,
  `target_raid_config` text DEFAULT NULL,
  `network_interface` varchar(255) DEFAULT NULL,
  `resource_class` varchar(80) DEFAULT NULL,
  `boot_interface` varchar(255) DEFAULT NULL,
  `console_interface` varchar(255) DEFAULT NULL,
  `deploy_interface` varchar(255) DEFAULT NULL,
  `inspect_interface` varchar(255) DEFAULT NULL,
  `management_interface` varchar(255) DEFAULT NULL,
  `power_interface` varchar(255) DEFAULT NULL,
  `raid_interface` varchar(255) DEFAULT NULL,
  `vendor_interface` varchar(255) DEFAULT NULL,
  `storage_interface` varchar(255) DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  `rescue_interface` varchar(255) DEFAULT NULL,
  `bios_interface` varchar(255) DEFAULT NULL,
  `fault` varchar(255) DEFAULT NULL,
  `deploy_step` text DEFAULT NULL,
  `conductor_group` varchar(255) NOT NULL DEFAULT '',
  `automated_clean` tinyint(1) DEFAULT NULL,
  `protected` tinyint(1) NOT NULL DEFAULT 0,
  `protected_reason` text DEFAULT NULL,
  `owner` varchar(255) DEFAULT NULL,
  `allocation_id` int(11) DEFAULT NULL,
  `description` text DEFAULT NULL,
  `retired` tinyint(1) DEFAULT 0,
  `retired_reason` text DEFAULT NULL,
  `lessee` varchar(255) DEFAULT NULL,
  `network_data` text DEFAULT NULL,
  `boot_mode` varchar(16) DEFAULT NULL,
  `secure_boot` tinyint(1) DEFAULT NULL,
  `shard` varchar(255) DEFAULT NULL,
  `parent_node` varchar(36) DEFAULT NULL,
  `firmware_interface` varchar(255) DEFAULT NULL,
  `service_step` text DEFAULT NULL,
  `disable_power_off` tinyint(1) DEFAULT 0,
  `instance_name` varchar(255) DEFAULT NULL,
  `health` varchar(32) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_nodes0instance_uuid` (`instance_uuid`),
  UNIQUE KEY `uniq_nodes0name` (`name`),
  UNIQUE KEY `uniq_nodes0uuid` (`uuid`),
  KEY `allocation_id` (`allocation_id`),
  KEY `chassis_id` (`chassis_id`),
  KEY `conductor_group_idx` (`conductor_group`),
  KEY `driver_idx` (`driver`),
  KEY `lessee_idx` (`lessee`),
  KEY `nodes_conductor_affinity_fk` (`conductor_affinity`),
  KEY `owner_idx` (`owner`),
  KEY `parent_node_idx` (`parent_node`),
  KEY `provision_state_idx` (`provision_state`),
  KEY `reservation_idx` (`reservation`),
  KEY `resource_class_idx` (`resource_class`),
  KEY `shard_idx` (`shard`),
  CONSTRAINT `nodes_conductor_affinity_fk` FOREIGN KEY (`conductor_affinity`) REFERENCES `conductors` (`id`),
  CONSTRAINT `nodes_ibfk_1` FOREIGN KEY (`chassis_id`) REFERENCES `chassis` (`id`),
  CONSTRAINT `nodes_ibfk_2` FOREIGN KEY (`allocation_id`) REFERENCES `allocations` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `bios_settings` (
  `node_id` int(11) NOT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `name` varchar(255) NOT NULL,
  `value` text DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  `attribute_type` varchar(255) DEFAULT NULL,
  `allowable_values` text DEFAULT NULL,
  `lower_bound` bigint(20) DEFAULT NULL,
  `max_length` int(11) DEFAULT NULL,
  `min_length` int(11) DEFAULT NULL,
  `read_only` tinyint(1) DEFAULT NULL,
  `reset_required` tinyint(1) DEFAULT NULL,
  `unique` tinyint(1) DEFAULT NULL,
  `upper_bound` bigint(20) DEFAULT NULL,
  PRIMARY KEY (`node_id`,`name`),
  CONSTRAINT `bios_settings_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `conductor_hardware_interfaces` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `conductor_id` int(11) NOT NULL,
  `hardware_type` varchar(255) NOT NULL,
  `interface_type` varchar(16) NOT NULL,
  `interface_name` varchar(255) NOT NULL,
  `default` tinyint(1) NOT NULL,
  `version` varchar(15) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_conductorhardwareinterfaces0` (`conductor_id`,`hardware_type`,`interface_type`,`interface_name`),
  CONSTRAINT `conductor_hardware_interfaces_ibfk_1` FOREIGN KEY (`conductor_id`) REFERENCES `conductors` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `deploy_templates` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `name` varchar(255) NOT NULL,
  `extra` text DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_deploytemplates0name` (`name`),
  UNIQUE KEY `uniq_deploytemplates0uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `deploy_template_steps` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `deploy_template_id` int(11) NOT NULL,
  `interface` varchar(255) NOT NULL,
  `step` varchar(255) NOT NULL,
  `args` text NOT NULL,
  `priority` int(11) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `deploy_template_id` (`deploy_template_id`),
  KEY `deploy_template_steps_interface_idx` (`interface`),
  KEY `deploy_template_steps_step_idx` (`step`),
  CONSTRAINT `deploy_template_steps_ibfk_1` FOREIGN KEY (`deploy_template_id`) REFERENCES `deploy_templates` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `firmware_information` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `node_id` int(11) NOT NULL,
  `component` varchar(255) NOT NULL,
  `initial_version` varchar(255) NOT NULL,
  `current_version` varchar(255) DEFAULT NULL,
  `last_version_flashed` varchar(255) DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  `vendor` varchar(255) DEFAULT NULL,
  `model` varchar(255) DEFAULT NULL,
  `serial_number` varchar(255) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_nodecomponent0node_id0component` (`node_id`,`component`),
  CONSTRAINT `firmware_information_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `inspection_rules` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) NOT NULL,
  `priority` int(11) NOT NULL,
  `description` varchar(255) DEFAULT NULL,
  `scope` varchar(255) DEFAULT NULL,
  `sensitive` tinyint(1) DEFAULT NULL,
  `phase` varchar(16) DEFAULT NULL,
  `conditions` longtext DEFAULT NULL,
  `actions` longtext NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_inspection_rules0uuid` (`uuid`),
  KEY `inspection_rule_phase_idx` (`phase`),
  KEY `inspection_rule_scope_idx` (`scope`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `node_history` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) NOT NULL,
  `conductor` varchar(255) DEFAULT NULL,
  `event_type` varchar(255) DEFAULT NULL,
  `severity` varchar(255) DEFAULT NULL,
  `event` text DEFAULT NULL,
  `user` varchar(64) DEFAULT NULL,
  `node_id` int(11) DEFAULT NULL,
  `project` varchar(80) DEFAULT NULL,
  `state` varchar(255) DEFAULT NULL,
  `target_provision_state` varchar(255) DEFAULT NULL,
  `duration_seconds` int(11) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_history0uuid` (`uuid`),
  KEY `history_conductor_idx` (`conductor`),
  KEY `history_node_id_idx` (`node_id`),
  KEY `history_uuid_idx` (`uuid`),
  CONSTRAINT `node_history_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `node_inventory` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `inventory_data` longtext DEFAULT NULL,
  `plugin_data` longtext DEFAULT NULL,
  `node_id` int(11) DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `inventory_node_id_idx` (`node_id`),
  CONSTRAINT `node_inventory_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `node_tags` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `node_id` int(11) NOT NULL,
  `tag` varchar(255) NOT NULL,
  `version` varchar(15) DEFAULT NULL,
  PRIMARY KEY (`node_id`,`tag`),
  KEY `node_tags_idx` (`tag`),
  CONSTRAINT `node_tags_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `node_traits` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `node_id` int(11) NOT NULL,
  `trait` varchar(255) NOT NULL,
  PRIMARY KEY (`node_id`,`trait`),
  KEY `node_traits_idx` (`trait`),
  CONSTRAINT `node_traits_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `portgroups` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `name` varchar(255) DEFAULT NULL,
  `node_id` int(11) DEFAULT NULL,
  `address` varchar(18) DEFAULT NULL,
  `extra` text DEFAULT NULL,
  `internal_info` text DEFAULT NULL,
  `standalone_ports_supported` tinyint(1) DEFAULT NULL,
  `properties` text DEFAULT NULL,
  `mode` varchar(255) DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  `physical_network` varchar(64) DEFAULT NULL,
  `category` varchar(80) DEFAULT NULL,
  `dynamic_portgroup` tinyint(1) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_portgroups0address` (`address`),
  UNIQUE KEY `uniq_portgroups0name` (`name`),
  UNIQUE KEY `uniq_portgroups0uuid` (`uuid`),
  KEY `node_id` (`node_id`),
  CONSTRAINT `portgroups_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `ports` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `address` varchar(18) DEFAULT NULL,
  `node_id` int(11) DEFAULT NULL,
  `extra` text DEFAULT NULL,
  `local_link_connection` text DEFAULT NULL,
  `portgroup_id` int(11) DEFAULT NULL,
  `pxe_enabled` tinyint(1) DEFAULT NULL,
  `internal_info` text DEFAULT NULL,
  `physical_network` varchar(64) DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  `is_smartnic` tinyint(1) DEFAULT NULL,
  `name` varchar(255) DEFAULT NULL,
  `description` varchar(255) DEFAULT NULL,
  `vendor` varchar(32) DEFAULT NULL,
  `category` varchar(80) DEFAULT NULL,
  `available_for_dynamic_portgroup` tinyint(1) NOT NULL DEFAULT 1,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_ports0address` (`address`),
  UNIQUE KEY `uniq_ports0name` (`name`),
  UNIQUE KEY `uniq_ports0uuid` (`uuid`),
  KEY `fk_portgroups_ports` (`portgroup_id`),
  KEY `node_id` (`node_id`),
  CONSTRAINT `fk_portgroups_ports` FOREIGN KEY (`portgroup_id`) REFERENCES `portgroups` (`id`),
  CONSTRAINT `ports_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `runbooks` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `name` varchar(255) NOT NULL,
  `disable_ramdisk` tinyint(1) DEFAULT NULL,
  `public` tinyint(1) DEFAULT NULL,
  `owner` varchar(255) DEFAULT NULL,
  `extra` text DEFAULT NULL,
  `description` varchar(255) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_runbooks0name` (`name`),
  UNIQUE KEY `uniq_runbooks0uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `runbook_steps` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `runbook_id` int(11) NOT NULL,
  `interface` varchar(255) NOT NULL,
  `step` varchar(255) NOT NULL,
  `args` text NOT NULL,
  `order` int(11) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `runbook_id` (`runbook_id`),
  KEY `runbook_steps_interface_idx` (`interface`),
  KEY `runbook_steps_step_idx` (`step`),
  CONSTRAINT `runbook_steps_ibfk_1` FOREIGN KEY (`runbook_id`) REFERENCES `runbooks` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `runbook_traits` (
  `version` varchar(15) DEFAULT NULL,
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `runbook_id` int(11) NOT NULL,
  `trait` varchar(255) NOT NULL,
  PRIMARY KEY (`runbook_id`,`trait`),
  KEY `runbook_traits_idx` (`trait`),
  CONSTRAINT `runbook_traits_ibfk_1` FOREIGN KEY (`runbook_id`) REFERENCES `runbooks` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

CREATE TABLE `volume_connectors` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `node_id` int(11) DEFAULT NULL,
  `type` varchar(32) DEFAULT NULL,
  `connector_id` varchar(255) DEFAULT NULL,
  `extra` text DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_volumeconnectors0type0connector_id` (`type`,`connector_id`),
  UNIQUE KEY `uniq_volumeconnectors0uuid` (`uuid`),
  KEY `node_id` (`node_id`),
  CONSTRAINT `volume_connectors_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE `volume_targets` (
  `created_at` datetime DEFAULT NULL,
  `updated_at` datetime DEFAULT NULL,
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `uuid` varchar(36) DEFAULT NULL,
  `node_id` int(11) DEFAULT NULL,
  `volume_type` varchar(64) DEFAULT NULL,
  `properties` text DEFAULT NULL,
  `boot_index` int(11) DEFAULT NULL,
  `volume_id` varchar(36) DEFAULT NULL,
  `extra` text DEFAULT NULL,
  `version` varchar(15) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_volumetargets0node_id0boot_index` (`node_id`,`boot_index`),
  UNIQUE KEY `uniq_volumetargets0uuid` (`uuid`),
  CONSTRAINT `volume_targets_ibfk_1` FOREIGN KEY (`node_id`) REFERENCES `nodes` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Upstream's migration bookkeeping, at head, so that ironic-dbsync sees an
-- up-to-date database.
INSERT INTO `alembic_version` (`version_num`) VALUES ('9fb44677ef15');
