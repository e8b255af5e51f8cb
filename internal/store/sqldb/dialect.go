package sqldb

import "strings"

// Quote quotes an identifier for the dialect. Upstream has columns named
// with reserved words (conductor_hardware_interfaces.default,
// runbook_steps.order, bios_settings.unique, node_history.user), so
// generated SQL quotes every name.
func (db *DB) Quote(ident string) string {
	if db.dialect == MySQL {
		return "`" + strings.ReplaceAll(ident, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"`
}

func (db *DB) quoteAll(idents []string) string {
	q := make([]string, len(idents))
	for i, id := range idents {
		q[i] = db.Quote(id)
	}
	return strings.Join(q, ", ")
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Upsert returns an INSERT of columns into table that, when a row with the
// same unique key exists, updates the update columns instead. conflict
// names the unique key's columns (SQLite needs them; MySQL finds the key by
// itself, and reacts to a clash on any unique key of the table, the
// primary key included). Arguments bind in the order of columns. With no update columns
// the existing row is left as it is (insert-if-absent), unlike MySQL's
// INSERT IGNORE, which would also swallow unrelated errors.
func (db *DB) Upsert(table string, columns, conflict, update []string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + db.Quote(table) + " (" + db.quoteAll(columns) + ") VALUES (" + placeholders(len(columns)) + ")")
	if db.dialect == MySQL {
		b.WriteString(" ON DUPLICATE KEY UPDATE ")
		if len(update) == 0 {
			// A no-op assignment: MySQL has no DO NOTHING.
			c := db.Quote(conflict[0])
			b.WriteString(c + " = " + c)
			return b.String()
		}
		for i, c := range update {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(db.Quote(c) + " = VALUES(" + db.Quote(c) + ")")
		}
		return b.String()
	}
	b.WriteString(" ON CONFLICT (" + db.quoteAll(conflict) + ") DO ")
	if len(update) == 0 {
		b.WriteString("NOTHING")
		return b.String()
	}
	b.WriteString("UPDATE SET ")
	for i, c := range update {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(db.Quote(c) + " = excluded." + db.Quote(c))
	}
	return b.String()
}

// ForUpdate is the suffix that write-locks the rows a SELECT reads inside a
// transaction. SQLite has none and needs none: a write transaction
// (BEGIN IMMEDIATE) already excludes every other writer.
func (db *DB) ForUpdate() string {
	if db.dialect == MySQL {
		return " FOR UPDATE"
	}
	return ""
}
