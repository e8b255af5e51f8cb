package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/builtin"
)

// checkResult is one oslo.upgradecheck result; the codes are its exit
// codes (0 success, 1 warning, 2 failure).
type checkResult struct {
	code    int
	details string
}

var resultNames = []string{"Success", "Warning", "Failure"}

// upgradeCheck is `ironic status upgrade check` (upstream ironic-status):
// the checks an operator runs before starting a new release, printed as
// oslo.upgradecheck prints them, the worst result as exit code.
func upgradeCheck(ctx context.Context, inv *invocation, stdout, stderr io.Writer) (int, error) {
	if strings.Join(inv.args, " ") != "upgrade check" {
		return 0, fmt.Errorf("%w: status needs `upgrade check`", errUsage)
	}
	cfg, _, err := loadConfig(modeDBSync, inv.load, stderr)
	if err != nil {
		return 0, err
	}
	checks := []struct {
		name string
		run  func() checkResult
	}{
		{"Database Schema", func() checkResult { return checkSchemaVersion(ctx, cfg) }},
		{"Hardware Types", func() checkResult { return checkHardwareTypes(cfg) }},
		{"Policy File JSON to YAML Migrated", func() checkResult { return checkPolicyFormat(cfg) }},
		{"Configuration Options", func() checkResult { return checkUnknownOptions(cfg) }},
		{"Secrets Encrypted at Rest", func() checkResult { return checkSecretsAtRest(ctx, cfg) }},
	}
	worst := 0
	var rows []string
	for _, c := range checks {
		r := c.run()
		worst = max(worst, r.code)
		details := r.details
		if details == "" {
			details = "None"
		}
		rows = append(rows, "Check: "+c.name+"\nResult: "+resultNames[r.code]+"\nDetails: "+details)
	}
	fmt.Fprint(stdout, table("Upgrade Check Results", rows))
	return worst, nil
}

func checkSchemaVersion(ctx context.Context, cfg *config.Config) checkResult {
	if path, absent := absentDatabase(cfg); absent {
		return checkResult{2, fmt.Sprintf("there is no database at %s ([database]/connection): run `ironic dbsync upgrade`", path)}
	}
	db, err := openDatabase(ctx, cfg, false)
	if err != nil {
		return checkResult{2, err.Error()}
	}
	defer db.Close()
	if err := checkSchema(ctx, db); err != nil {
		return checkResult{2, err.Error()}
	}
	return checkResult{}
}

// checkHardwareTypes enables the drivers as a conductor would: an error
// stops a conductor.
func checkHardwareTypes(cfg *config.Config) checkResult {
	o, err := builtin.OptionsFromConfig(cfg)
	if err != nil {
		return checkResult{2, err.Error()}
	}
	r, err := builtin.Registry(o)
	if err != nil {
		return checkResult{2, err.Error()}
	}
	d, err := r.Build(driver.SettingsFromConfig(cfg))
	if err == nil {
		_, err = d.HardwareInterfaces()
	}
	if err != nil {
		return checkResult{2, err.Error()}
	}
	return checkResult{}
}

// checkUnknownOptions lists what the configuration files say that no
// option is (oslo.config ignores it, so a misspelt option keeps its
// default) and the options they set that have no effect here.
func checkUnknownOptions(cfg *config.Config) checkResult {
	var lines []string
	for _, u := range cfg.Unknown() {
		lines = append(lines, u.String())
	}
	lines = append(lines, ineffectiveOptions(cfg)...)
	if len(lines) > 0 {
		return checkResult{1, strings.Join(lines, "\n")}
	}
	return checkResult{}
}

// absentDatabase returns the file of a SQLite [database]/connection that
// does not exist. Commands that only read must not create it, as opening
// it would (with its folder, for dbsync).
func absentDatabase(cfg *config.Config) (string, bool) {
	path, ok := sqliteFile(cfg.StringOf(config.DatabaseConnection))
	if !ok {
		return "", false
	}
	_, err := os.Stat(path)
	return path, errors.Is(err, fs.ErrNotExist)
}

// checkPolicyFormat is oslo.upgradecheck's common policy check: JSON
// policy files are deprecated in favour of YAML.
func checkPolicyFormat(cfg *config.Config) checkResult {
	if f := cfg.StringOf(config.OsloPolicyPolicyFile); strings.HasSuffix(strings.ToLower(f), ".json") {
		return checkResult{1, "Your policy file is JSON-formatted which is deprecated. Convert it to YAML (oslopolicy-convert-json-to-yaml)."}
	}
	return checkResult{}
}

// table draws rows in one left-aligned column under a title, as
// prettytable does for oslo.upgradecheck.
func table(title string, rows []string) string {
	width := len(title)
	for _, r := range rows {
		for _, l := range strings.Split(r, "\n") {
			width = max(width, len(l))
		}
	}
	rule := "+" + strings.Repeat("-", width+2) + "+\n"
	line := func(s string) string { return "| " + s + strings.Repeat(" ", width-len(s)) + " |\n" }
	var b strings.Builder
	b.WriteString(rule + line(title) + rule)
	for _, r := range rows {
		for _, l := range strings.Split(r, "\n") {
			b.WriteString(line(l))
		}
		b.WriteString(rule)
	}
	return b.String()
}
