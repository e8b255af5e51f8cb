// Package takeover tests that a database of Debian 12's Ironic 21.4 (the
// 2023.1 release, Alembic 4dbec778866e) is taken over: Debian's own
// ironic-dbsync makes it, Debian's own Ironic fills it through its API,
// `ironic dbsync upgrade` brings it to upstream's head, and our service then
// serves every resource as Ironic 21.4 served it. The test needs Debian's
// ironic-api/ironic-conductor packages; it is skipped without them (and
// fails when IRONIC_SPEC_REQUIRED=1 says they must be there).
package takeover
