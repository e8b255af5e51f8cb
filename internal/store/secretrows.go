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

// secretRow is a node's secret-bearing columns as stored ("" for NULL).
type secretRow struct {
	id    int64
	uuid  string
	texts [3]string // driver_info, instance_info, driver_internal_info
}

// secretColumnList is the SELECT list of a secretRow.
const secretColumnList = "id, uuid, driver_info, instance_info, driver_internal_info"

// secretRowBatch is how many rows the commands and checks read at once.
const secretRowBatch = 100

// readSecretRows reads up to secretRowBatch rows with id above after,
// those holding a sealed value only when sealedOnly.
func readSecretRows(ctx context.Context, q querier, after int64, sealedOnly bool) ([]secretRow, error) {
	query := "SELECT " + secretColumnList + " FROM nodes WHERE id > ?"
	args := []any{after}
	if sealedOnly {
		like := "%" + secrets.Prefix + "%"
		query += " AND (driver_info LIKE ? OR instance_info LIKE ? OR driver_internal_info LIKE ?)"
		args = append(args, like, like, like)
	}
	rows, err := q.QueryContext(ctx, query+fmt.Sprintf(" ORDER BY id LIMIT %d", secretRowBatch), args...)
	if err != nil {
		return nil, fmt.Errorf("read nodes' secrets: %w", err)
	}
	defer rows.Close()
	var out []secretRow
	for rows.Next() {
		var r secretRow
		var texts [3]sql.NullString
		if err := rows.Scan(&r.id, &r.uuid, &texts[0], &texts[1], &texts[2]); err != nil {
			return nil, fmt.Errorf("read nodes' secrets: %w", err)
		}
		for i, t := range texts {
			r.texts[i] = t.String
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// dicts decodes the row's columns; an empty or null text is a nil dict.
func (r *secretRow) dicts() ([3]map[string]any, error) {
	var ms [3]map[string]any
	for i, t := range r.texts {
		if t == "" || t == "null" {
			continue
		}
		if err := json.Unmarshal([]byte(t), &ms[i]); err != nil {
			return ms, fmt.Errorf("node %s: %s: %w", r.uuid, secretColumns[i].name, err)
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
	for after := int64(0); ; {
		rows, err := readSecretRows(ctx, db, after, true)
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
			ms, err := r.dicts()
			if err != nil {
				return err
			}
			for j, c := range secretColumns {
				if _, err := secrets.Open(ring, r.uuid, c.name, ms[j]); err != nil {
					return err
				}
			}
		}
		if len(rows) < secretRowBatch {
			return nil
		}
	}
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

// SecretSurvey counts the secret values of the nodes as stored.
type SecretSurvey struct {
	// Nodes is how many nodes there are.
	Nodes int
	// PlainNodes is how many of them hold a secret in plain text.
	PlainNodes int
	// Counts are the secret values by form.
	Counts secrets.Counts
}

// SurveySecrets counts the nodes' secret values, plain and sealed by key
// (`ironic status upgrade check`).
func SurveySecrets(ctx context.Context, db *sqldb.DB) (SecretSurvey, error) {
	var s SecretSurvey
	for after := int64(0); ; {
		rows, err := readSecretRows(ctx, db, after, false)
		if err != nil {
			return s, err
		}
		for i := range rows {
			after = rows[i].id
			ms, err := rows[i].dicts()
			if err != nil {
				return s, err
			}
			before := s.Counts.Plain
			for j, c := range secretColumns {
				s.Counts.Count(c.name, ms[j])
			}
			s.Nodes++
			if s.Counts.Plain > before {
				s.PlainNodes++
			}
		}
		if len(rows) < secretRowBatch {
			return s, nil
		}
	}
}

// ConvertOptions tune ConvertSecrets.
type ConvertOptions struct {
	// AfterRow, when set, is called after each node rewritten with how
	// many have been so far (the tests kill the command there).
	AfterRow func(rewritten int)
}

// ConvertReport is what ConvertSecrets did.
type ConvertReport struct {
	// Nodes is how many nodes were read; Rewritten how many were written.
	Nodes, Rewritten int
	// Values is how many secret values were sealed, resealed or opened.
	Values int
	// Retries is how many rewrites found the row changed under them and
	// read it again.
	Retries int
}

// maxRowRetries bounds the rewrites of one row that keeps changing.
const maxRowRetries = 50

// ConvertSecrets applies op (encrypt, rotate, decrypt) to every node's
// secret values, row by row, each rewrite a conditional UPDATE that
// succeeds only if the row's three columns are still the text it
// converted: a concurrent write (the service running beside it) is never
// lost, the row is read again and converted anew. updated_at is left as
// it is: the node's content does not change. Killed at any point, it has
// written whole rows or nothing of a row, and run again it goes on where
// it was (rows already converted have nothing left to convert).
func ConvertSecrets(ctx context.Context, db *sqldb.DB, ring *secrets.KeyRing, op secrets.Op, o ConvertOptions) (ConvertReport, error) {
	var rep ConvertReport
	if ring == nil {
		return rep, errors.New("no key ring configured ([openkeel_secrets]/key_files)")
	}
	update := rewriteQuery(db)
	for after := int64(0); ; {
		rows, err := readSecretRows(ctx, db, after, op != secrets.Encrypt)
		if err != nil {
			return rep, err
		}
		for i := range rows {
			r := rows[i]
			after = r.id
			rep.Nodes++
			for try := 0; ; try++ {
				if try == maxRowRetries {
					return rep, fmt.Errorf("node %s: changed under each of %d rewrites", r.uuid, maxRowRetries)
				}
				texts, n, err := convertRow(ring, op, &r)
				if err != nil || n == 0 {
					if err != nil {
						return rep, err
					}
					break
				}
				args := []any{texts[0], texts[1], texts[2], r.id, r.texts[0], r.texts[1], r.texts[2]}
				res, err := db.ExecContext(ctx, update, args...)
				if err != nil {
					return rep, fmt.Errorf("node %s: %w", r.uuid, err)
				}
				if done, err := res.RowsAffected(); err != nil {
					return rep, fmt.Errorf("node %s: %w", r.uuid, err)
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
				again, err := readRow(ctx, db, r.id)
				if err != nil {
					return rep, err
				}
				if again == nil {
					break
				}
				r = *again
			}
		}
		if len(rows) < secretRowBatch {
			return rep, nil
		}
	}
}

// rewriteQuery sets a node's three secret columns if they still hold the
// texts read, compared byte for byte (MySQL's default collation would
// take two values differing in case for equal).
func rewriteQuery(db *sqldb.DB) string {
	eq := "COALESCE(%s, '') = ?"
	if db.Dialect() == sqldb.MySQL {
		eq = "BINARY COALESCE(%s, '') = BINARY ?"
	}
	var conds []string
	for _, c := range secretColumns {
		conds = append(conds, fmt.Sprintf(eq, c.name))
	}
	return "UPDATE nodes SET driver_info = ?, instance_info = ?, driver_internal_info = ? WHERE id = ? AND " + strings.Join(conds, " AND ")
}

// readRow reads one node's secret columns again; nil when it is gone.
func readRow(ctx context.Context, db *sqldb.DB, id int64) (*secretRow, error) {
	rows, err := readSecretRows(ctx, db, id-1, false)
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
func convertRow(ring *secrets.KeyRing, op secrets.Op, r *secretRow) ([3]any, int, error) {
	var texts [3]any
	ms, err := r.dicts()
	if err != nil {
		return texts, 0, err
	}
	total := 0
	for i, c := range secretColumns {
		texts[i] = nullable(r.texts[i])
		out, n, err := ring.Convert(op, r.uuid, c.name, ms[i])
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
