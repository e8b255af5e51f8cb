package main

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	_ "github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite"
)

// floorQueries read what each list request must read, in one statement:
// the first page of 1,000 nodes in the API's order (by id).
var floorQueries = map[string]string{
	"list":   "SELECT uuid, instance_uuid, power_state, provision_state, maintenance, name FROM nodes ORDER BY id LIMIT 1000",
	"detail": "SELECT * FROM nodes ORDER BY id LIMIT 1000",
	"nova":   "SELECT uuid, power_state, target_power_state, provision_state, target_provision_state, last_error, maintenance, properties, instance_uuid, resource_class FROM nodes ORDER BY id LIMIT 1000",
}

// jsonColumns hold serialized JSON the API returns as objects.
var jsonColumns = map[string]bool{
	"properties": true, "driver_info": true, "driver_internal_info": true, "extra": true,
	"instance_info": true, "clean_step": true, "deploy_step": true, "service_step": true,
	"raid_config": true, "target_raid_config": true, "network_data": true,
}

// measureFloor times the query + encoding sequentially for d/2 and then
// with one goroutine per CPU for d/2 (the server has the same CPUs).
// The floor is the physical limit of one list request: one query and the
// encoding of its rows, with no HTTP, routing, policy or rendering rules.
func measureFloor(ctx context.Context, driver, dsn, kind, base string, d time.Duration) (*Floor, error) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	defer db.Close()
	procs := runtime.GOMAXPROCS(0)
	db.SetMaxOpenConns(procs)
	db.SetMaxIdleConns(procs)
	query := floorQueries[kind]
	out, err := floorOnce(ctx, db, query, kind, base, nil)
	if err != nil {
		return nil, err
	}
	res := &Floor{Query: query, Bytes: len(out)}

	var samples []time.Duration
	cpu0, err := selfCPU()
	if err != nil {
		return nil, err
	}
	end := time.Now().Add(d / 2)
	for time.Now().Before(end) && len(samples) < maxSamples {
		t0 := time.Now()
		if out, err = floorOnce(ctx, db, query, kind, base, out[:0]); err != nil {
			return nil, err
		}
		samples = append(samples, time.Since(t0))
	}
	cpu1, err := selfCPU()
	if err != nil {
		return nil, err
	}
	res.CPU = (cpu1 - cpu0) / time.Duration(len(samples))
	single := summarize(samples)
	res.P50, res.P99 = single.p50, single.p99

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		count int
		ferr  error
	)
	start := time.Now()
	end = start.Add(d / 2)
	for range procs {
		wg.Go(func() {
			var buf []byte
			n := 0
			for time.Now().Before(end) {
				var err error
				if buf, err = floorOnce(ctx, db, query, kind, base, buf[:0]); err != nil {
					mu.Lock()
					ferr = err
					mu.Unlock()
					return
				}
				n++
			}
			mu.Lock()
			count += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if ferr != nil {
		return nil, ferr
	}
	res.Rate = float64(count) / time.Since(start).Seconds()
	return res, nil
}

// selfCPU is this process's user+system CPU time: with SQLite the query
// runs in-process, so it holds the whole floor.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// floorOnce runs the query and appends {"nodes": [...]} with each row's
// columns under their names, JSON columns inline, booleans as booleans
// and the two links every node carries.
func floorOnce(ctx context.Context, db *sql.DB, query, kind, base string, out []byte) ([]byte, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("floor %s: %w", kind, err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("floor %s: %w", kind, err)
	}
	type column struct {
		key  []byte
		enc  byte // j json, b bool, n number, s string
		uuid bool
	}
	cols := make([]column, len(types))
	for i, t := range types {
		c := column{key: fmt.Appendf(nil, "%q: ", t.Name()), enc: 's', uuid: t.Name() == "uuid"}
		typ := strings.ToUpper(t.DatabaseTypeName())
		switch {
		case jsonColumns[t.Name()]:
			c.enc = 'j'
		case typ == "BOOLEAN" || typ == "BOOL" || typ == "TINYINT":
			c.enc = 'b'
		case strings.Contains(typ, "INT"):
			c.enc = 'n'
		}
		cols[i] = c
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	out = append(out, `{"nodes": [`...)
	first := true
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("floor %s: %w", kind, err)
		}
		if !first {
			out = append(out, ", "...)
		}
		first = false
		out = append(out, '{')
		var uuid []byte
		for i, c := range cols {
			if i > 0 {
				out = append(out, ", "...)
			}
			out = append(out, c.key...)
			v := vals[i]
			switch {
			case v == nil:
				out = append(out, "null"...)
			case c.enc == 'j':
				out = append(out, v...)
			case c.enc == 'b':
				if len(v) == 1 && v[0] == '0' || string(v) == "false" {
					out = append(out, "false"...)
				} else {
					out = append(out, "true"...)
				}
			case c.enc == 'n':
				out = append(out, v...)
			default:
				out = appendString(out, v)
			}
			if c.uuid {
				uuid = v
			}
		}
		if kind == "nova" {
			out = append(out, `, "traits": []`...)
		}
		out = append(out, `, "links": [{"href": "`...)
		out = append(out, base...)
		out = append(out, "/v1/nodes/"...)
		out = append(out, uuid...)
		out = append(out, `", "rel": "self"}, {"href": "`...)
		out = append(out, base...)
		out = append(out, "/nodes/"...)
		out = append(out, uuid...)
		out = append(out, `", "rel": "bookmark"}]}`...)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("floor %s: %w", kind, err)
	}
	return append(out, "]}"...), nil
}

// appendString appends s as a JSON string.
func appendString(out, s []byte) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, `\ufffd`...)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			out = append(out, c)
		}
		i++
	}
	return append(out, '"')
}
