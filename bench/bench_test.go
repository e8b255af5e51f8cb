package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"
)

// The floor's string encoder must produce what encoding/json decodes back
// to the same text, or the floor would measure an invalid document.
func TestAppendStringRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te`, `back\slash`, "tab\tnew\nline\x01", "ünïcødé ✓", "bad\xffutf8"} {
		var got, want string
		if err := json.Unmarshal(appendString(nil, []byte(s)), &got); err != nil {
			t.Fatalf("%q: %s is not JSON: %v", s, appendString(nil, []byte(s)), err)
		}
		ref, _ := json.Marshal(s)
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%q: decoded %q, encoding/json gives %q", s, got, want)
		}
	}
}

func TestSummarizePercentiles(t *testing.T) {
	var samples []time.Duration
	for i := 100; i >= 1; i-- {
		samples = append(samples, time.Duration(i)*time.Millisecond)
	}
	l := summarize(samples)
	if l.p50 != 51*time.Millisecond || l.p99 != 100*time.Millisecond || l.max != 100*time.Millisecond {
		t.Fatalf("got %+v", l)
	}
	if (summarize(nil) != latency{}) {
		t.Fatal("empty samples must give a zero latency")
	}
}

func TestParseSettings(t *testing.T) {
	t.Setenv("BENCH_DURATION", "12")
	t.Setenv("BENCH_NODES", "")
	s, err := parseSettings([]string{"-backends", "mariadb"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(s.binary) || filepath.Base(s.binary) != "ironic" {
		t.Errorf("binary %q: want bin/ironic made absolute, the services run in another folder", s.binary)
	}
	if s.duration != 12*time.Second || s.nodes != 10000 || len(s.backends) != 1 || s.backends[0] != "mariadb" {
		t.Fatalf("got %+v", s)
	}
	for _, args := range [][]string{{"-nodes", "10"}, {"-backends", "postgres"}, {"-duration", "10ms"}, {"-concurrency", "0"}} {
		if _, err := parseSettings(args, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// The floor document is valid JSON with the column types the API uses.
func TestFloorOnceEncodesRows(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "f.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE nodes (id INTEGER PRIMARY KEY, uuid VARCHAR(36), maintenance BOOLEAN, properties TEXT, name VARCHAR(255))",
		`INSERT INTO nodes VALUES (1, 'u-1', 0, '{"cpus": 4}', 'a"b'), (2, 'u-2', 1, NULL, NULL)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	out, err := floorOnce(ctx, db, "SELECT * FROM nodes ORDER BY id", "nova", "http://h", nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if len(doc.Nodes) != 2 {
		t.Fatalf("%s", out)
	}
	first, second := doc.Nodes[0], doc.Nodes[1]
	if first["id"] != 1.0 || first["maintenance"] != false || second["maintenance"] != true || first["name"] != `a"b` || second["name"] != nil {
		t.Errorf("scalars: %s", out)
	}
	if props, ok := first["properties"].(map[string]any); !ok || props["cpus"] != 4.0 {
		t.Errorf("properties not inline JSON: %s", out)
	}
	links, _ := second["links"].([]any)
	if len(links) != 2 || links[0].(map[string]any)["href"] != "http://h/v1/nodes/u-2" {
		t.Errorf("links: %v", second["links"])
	}
	if traits, ok := first["traits"].([]any); !ok || len(traits) != 0 {
		t.Errorf("nova rows need an empty traits list: %s", out)
	}
}

func TestPowerSyncMetricsParsesThePowerSyncSeries(t *testing.T) {
	page := `# HELP ironic_conductor_periodic_runs_total Passes of each periodic task.
ironic_conductor_periodic_runs_total{conductor="h",task="_check_deploy_timeouts"} 7
ironic_conductor_periodic_runs_total{conductor="h",task="_sync_power_states"} 2
ironic_conductor_periodic_duration_seconds_sum{conductor="h",task="_sync_power_states"} 3.5
ironic_conductor_periodic_duration_seconds_count{conductor="h",task="_sync_power_states"} 2
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, page) }))
	defer srv.Close()
	runs, seconds, err := powerSyncMetrics(context.Background(), srv.URL)
	if err != nil || runs != 2 || seconds != 3.5 {
		t.Fatalf("runs %g, seconds %g, %v", runs, seconds, err)
	}
}
