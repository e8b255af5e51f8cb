package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// secretTable is a table whose rows hold secrets, as the conversion
// commands and checks read and rewrite it.
type secretTable struct {
	// table is the table read and rewritten, aliased t in from.
	table string
	// from is the FROM clause: t, joined to its parent p when the
	// additional data's UUID is the parent's (steps).
	from string
	// uuid is the expression of the UUID the values are sealed with.
	uuid string
	// cols are the columns of t holding secrets, with the places their
	// values' additional data names.
	cols []secretCol
}

// secretCol is a column of a secretTable.
type secretCol struct{ column, place string }

var (
	nodeSecrets = secretTable{table: "nodes", from: "nodes t", uuid: "t.uuid", cols: []secretCol{
		{secrets.DriverInfo, secrets.DriverInfo},
		{secrets.InstanceInfo, secrets.InstanceInfo},
		{secrets.DriverInternalInfo, secrets.DriverInternalInfo},
	}}
	// secretTables are every table holding secrets: the nodes', then the
	// other resources' upstream masks.
	secretTables = []secretTable{
		nodeSecrets,
		{table: "volume_targets", from: "volume_targets t", uuid: "t.uuid",
			cols: []secretCol{{"properties", secrets.VolumeTargetProperties}}},
		{table: "deploy_template_steps", from: "deploy_template_steps t JOIN deploy_templates p ON p.id = t.deploy_template_id", uuid: "p.uuid",
			cols: []secretCol{{"args", secrets.DeployTemplateStepArgs}}},
		{table: "runbook_steps", from: "runbook_steps t JOIN runbooks p ON p.id = t.runbook_id", uuid: "p.uuid",
			cols: []secretCol{{"args", secrets.RunbookStepArgs}}},
	}
)

// secretRow is a row's secret-bearing columns as stored ("" for NULL).
type secretRow struct {
	id    int64
	uuid  string
	texts []string // in the order of the table's cols
}

// secretRowBatch is how many rows the commands and checks read at once.
const secretRowBatch = 100

// readSecretRows reads up to secretRowBatch rows of tbl with id above
// after, those holding a sealed value only when sealedOnly.
func readSecretRows(ctx context.Context, q querier, tbl *secretTable, after int64, sealedOnly bool) ([]secretRow, error) {
	list := []string{"t.id", tbl.uuid}
	var likes []string
	args := []any{after}
	for _, c := range tbl.cols {
		list = append(list, "t."+quote(c.column))
		likes = append(likes, "t."+quote(c.column)+" LIKE ?")
	}
	query := "SELECT " + strings.Join(list, ", ") + " FROM " + tbl.from + " WHERE t.id > ?"
	if sealedOnly {
		query += " AND (" + strings.Join(likes, " OR ") + ")"
		for range tbl.cols {
			args = append(args, "%"+secrets.Prefix+"%")
		}
	}
	rows, err := q.QueryContext(ctx, query+fmt.Sprintf(" ORDER BY t.id LIMIT %d", secretRowBatch), args...)
	if err != nil {
		return nil, fmt.Errorf("read %s' secrets: %w", tbl.table, err)
	}
	defer rows.Close()
	var out []secretRow
	for rows.Next() {
		r := secretRow{texts: make([]string, len(tbl.cols))}
		texts := make([]sql.NullString, len(tbl.cols))
		dest := []any{&r.id, &r.uuid}
		for i := range texts {
			dest = append(dest, &texts[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read %s' secrets: %w", tbl.table, err)
		}
		for i, t := range texts {
			r.texts[i] = t.String
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// dicts decodes the row's columns; an empty or null text is a nil dict.
func (r *secretRow) dicts(tbl *secretTable) ([]map[string]any, error) {
	ms := make([]map[string]any, len(r.texts))
	for i, t := range r.texts {
		if t == "" || t == "null" {
			continue
		}
		if err := json.Unmarshal([]byte(t), &ms[i]); err != nil {
			return ms, fmt.Errorf("%s %d (%s): %s: %w", tbl.table, r.id, r.uuid, tbl.cols[i].column, err)
		}
	}
	return ms, nil
}

// CheckKeyRing verifies that ring (nil: none configured) opens what the
// database holds: every key id that a sealed value names is in the ring,
// and one value of each opens (a different key under a known id fails
// GCM's check). A process with the wrong keys refuses to start on its
// error rather than hand the sealed text to a BMC. The check reads only
// rows holding a sealed value and decodes one per key id.
func CheckKeyRing(ctx context.Context, db *sqldb.DB, ring *secrets.KeyRing) error {
	checked := map[string]bool{}
	for ti := range secretTables {
		tbl := &secretTables[ti]
		for after := int64(0); ; {
			rows, err := readSecretRows(ctx, db, tbl, after, true)
			if err != nil {
				return err
			}
			for i := range rows {
				r := &rows[i]
				after = r.id
				fresh := false
				for _, t := range r.texts {
					for _, id := range sealedKeyIDs(t) {
						if !checked[id] {
							checked[id], fresh = true, true
						}
					}
				}
				if !fresh {
					continue
				}
				ms, err := r.dicts(tbl)
				if err != nil {
					return err
				}
				for j, c := range tbl.cols {
					if _, err := secrets.Open(ring, r.uuid, c.place, ms[j]); err != nil {
						return err
					}
				}
			}
			if len(rows) < secretRowBatch {
				break
			}
		}
	}
	return nil
}

// sealedKeyIDs are the key ids of the sealed values in text, without
// decoding it (ids repeat).
func sealedKeyIDs(text string) []string {
	var ids []string
	for {
		i := strings.Index(text, `"`+secrets.Prefix)
		if i < 0 {
			return ids
		}
		text = text[i+1:]
		if id, ok := secrets.KeyID(text); ok {
			ids = append(ids, id)
		}
		text = text[len(secrets.Prefix):]
	}
}

// SecretSurvey counts the secret values as stored.
type SecretSurvey struct {
	// Nodes is how many nodes there are.
	Nodes int
	// PlainNodes is how many of them hold a secret in plain text.
	PlainNodes int
	// PlainOthers is how many volume targets and steps of deploy
	// templates and runbooks hold a secret in plain text.
	PlainOthers int
	// Counts are the secret values by form, of every table.
	Counts secrets.Counts
}

// SurveySecrets counts the secret values of every table holding them,
// plain and sealed by key (`ironic status upgrade check`).
func SurveySecrets(ctx context.Context, db *sqldb.DB) (SecretSurvey, error) {
	var s SecretSurvey
	for ti := range secretTables {
		tbl := &secretTables[ti]
		nodes := tbl.table == nodeSecrets.table
		for after := int64(0); ; {
			rows, err := readSecretRows(ctx, db, tbl, after, false)
			if err != nil {
				return s, err
			}
			for i := range rows {
				after = rows[i].id
				ms, err := rows[i].dicts(tbl)
				if err != nil {
					return s, err
				}
				before := s.Counts.Plain
				for j, c := range tbl.cols {
					s.Counts.Count(c.place, ms[j])
				}
				plain := s.Counts.Plain > before
				switch {
				case nodes:
					s.Nodes++
					if plain {
						s.PlainNodes++
					}
				case plain:
					s.PlainOthers++
				}
			}
			if len(rows) < secretRowBatch {
				break
			}
		}
	}
	return s, nil
}

// ConvertOptions tune ConvertSecrets.
type ConvertOptions struct {
	// AfterRow, when set, is called after each row rewritten with how
	// many have been so far (the tests kill the command there).
	AfterRow func(rewritten int)
}

// ConvertReport is what ConvertSecrets did.
type ConvertReport struct {
	// Nodes is how many nodes were read, Others how many volume targets
	// and steps; Rewritten how many rows of either were written.
	Nodes, Others, Rewritten int
	// Values is how many secret values were sealed, resealed or opened.
	Values int
	// Retries is how many rewrites found the row changed under them and
	// read it again.
	Retries int
}

// maxRowRetries bounds the rewrites of one row that keeps changing.
const maxRowRetries = 50

// ConvertSecrets applies op (encrypt, rotate, decrypt) to the secret
// values of every table holding them (nodes first), row by row, each
// rewrite a conditional UPDATE that succeeds only if the row's secret
// columns are still the text it converted: a concurrent write (the
// service running beside it) is never lost, the row is read again and
// converted anew. updated_at is left as it is: the content does not
// change. Killed at any point, it has written whole rows or nothing of a
// row, and run again it goes on where it was (rows already converted have
// nothing left to convert).
func ConvertSecrets(ctx context.Context, db *sqldb.DB, ring *secrets.KeyRing, op secrets.Op, o ConvertOptions) (ConvertReport, error) {
	var rep ConvertReport
	if ring == nil {
		return rep, errors.New("no key ring configured ([openkeel_secrets]/key_files)")
	}
	for ti := range secretTables {
		if err := convertTable(ctx, db, ring, op, &secretTables[ti], o, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// convertTable is ConvertSecrets over one table.
func convertTable(ctx context.Context, db *sqldb.DB, ring *secrets.KeyRing, op secrets.Op, tbl *secretTable, o ConvertOptions, rep *ConvertReport) error {
	update := rewriteQuery(db, tbl)
	for after := int64(0); ; {
		rows, err := readSecretRows(ctx, db, tbl, after, op != secrets.Encrypt)
		if err != nil {
			return err
		}
		for i := range rows {
			r := rows[i]
			after = r.id
			if tbl.table == nodeSecrets.table {
				rep.Nodes++
			} else {
				rep.Others++
			}
			for try := 0; ; try++ {
				if try == maxRowRetries {
					return fmt.Errorf("%s %d (%s): changed under each of %d rewrites", tbl.table, r.id, r.uuid, maxRowRetries)
				}
				texts, n, err := convertRow(ring, op, tbl, &r)
				if err != nil || n == 0 {
					if err != nil {
						return err
					}
					break
				}
				args := append(texts, r.id)
				for _, t := range r.texts {
					args = append(args, t)
				}
				res, err := db.ExecContext(ctx, update, args...)
				if err != nil {
					return fmt.Errorf("%s %d (%s): %w", tbl.table, r.id, r.uuid, err)
				}
				if done, err := res.RowsAffected(); err != nil {
					return fmt.Errorf("%s %d (%s): %w", tbl.table, r.id, r.uuid, err)
				} else if done == 1 {
					rep.Rewritten++
					rep.Values += n
					if o.AfterRow != nil {
						o.AfterRow(rep.Rewritten)
					}
					break
				}
				// Written meanwhile (or deleted): read it again.
				rep.Retries++
				again, err := readRow(ctx, db, tbl, r.id)
				if err != nil {
					return err
				}
				if again == nil {
					break
				}
				r = *again
			}
		}
		if len(rows) < secretRowBatch {
			return nil
		}
	}
}

// rewriteQuery sets a row's secret columns if they still hold the texts
// read, compared byte for byte (MySQL's default collation would take two
// values differing in case for equal).
func rewriteQuery(db *sqldb.DB, tbl *secretTable) string {
	eq := "COALESCE(%s, '') = ?"
	if db.Dialect() == sqldb.MySQL {
		eq = "BINARY COALESCE(%s, '') = BINARY ?"
	}
	var sets, conds []string
	for _, c := range tbl.cols {
		sets = append(sets, quote(c.column)+" = ?")
		conds = append(conds, fmt.Sprintf(eq, quote(c.column)))
	}
	return "UPDATE " + tbl.table + " SET " + strings.Join(sets, ", ") + " WHERE id = ? AND " + strings.Join(conds, " AND ")
}

// readRow reads one row's secret columns again; nil when it is gone.
func readRow(ctx context.Context, db *sqldb.DB, tbl *secretTable, id int64) (*secretRow, error) {
	rows, err := readSecretRows(ctx, db, tbl, id-1, false)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || rows[0].id != id {
		return nil, nil
	}
	return &rows[0], nil
}

// convertRow converts the row's dicts and returns their new texts and how
// many values changed. A column with nothing to convert keeps its text
// (NULL stays NULL).
func convertRow(ring *secrets.KeyRing, op secrets.Op, tbl *secretTable, r *secretRow) ([]any, int, error) {
	texts := make([]any, len(tbl.cols))
	ms, err := r.dicts(tbl)
	if err != nil {
		return texts, 0, err
	}
	total := 0
	for i, c := range tbl.cols {
		texts[i] = nullable(r.texts[i])
		out, n, err := ring.Convert(op, r.uuid, c.place, ms[i])
		if err != nil {
			return texts, 0, err
		}
		if n == 0 {
			continue
		}
		if texts[i], err = encodeJSON(out); err != nil {
			return texts, 0, err
		}
		total += n
	}
	return texts, total, nil
}

// nullable is text as stored: "" was NULL.
func nullable(text string) any {
	if text == "" {
		return nil
	}
	return text
}
