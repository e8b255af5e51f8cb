// Package mixedfleet tests a rolling migration from Debian 12's Ironic 21.4
// (the 2023.1 release) to ours over JSON-RPC, on one MariaDB database: our
// processes run with [DEFAULT]/pin_release_version = 21.4, so that they
// speak 21.4's RPC API version and object versions and write rows 21.4
// reads. Its phases are the combinations of issue 28 in the order a
// migration meets them: (a) Debian's ironic-api calling our conductor, (b)
// our ironic api calling Debian's ironic-conductor, (c) one conductor of
// each behind both APIs, nodes spread by the shared hash ring, then
// Debian's conductor stopped and ours taking its nodes over.
//
// TestRollingMigrationOverOslo runs the same phases with every process on
// rpc_transport = oslo (oslo.messaging over a private RabbitMQ node of
// testing/rabbitmq).
//
// Debian's 21.4 JSON-RPC client calls every conductor at its own
// [json_rpc]port (it reads no port from the conductor's host name, as
// 2023.2's does), so two conductors need two addresses: the second one
// listens on 127.0.0.2, a loopback address like 127.0.0.1.
//
// The test needs Debian's ironic-api and ironic-conductor packages and a
// MariaDB server (IRONIC_TEST_MYSQL_DSN); it is skipped without them, and
// fails instead when IRONIC_TEST_MIXED_REQUIRED=1 says they must be there
// (.ci/run sets it).
package mixedfleet
