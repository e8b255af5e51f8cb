package main

import (
	"log/slog"

	"github.com/openkeel/ironic/internal/config"
)

// ineffectiveOptions says, one line each, which options the files set that
// change nothing here: those of internal/config/unread.go set away from
// their default, and rpc_transport = oslo, which the all-in-one process
// overrides (its API calls its conductor in-process).
func ineffectiveOptions(cfg *config.Config) []string {
	var lines []string
	if usesOslo(cfg) {
		lines = append(lines, osloInProcess)
	}
	for _, i := range cfg.Ineffective() {
		lines = append(lines, i.String())
	}
	return lines
}

// osloInProcess is said of rpc_transport = oslo, which only the
// all-in-one process ignores.
const osloInProcess = "option [DEFAULT]/rpc_transport = oslo has no effect in the all-in-one process " +
	"(its API calls its conductor in-process; ironic api and ironic conductor talk oslo.messaging)"

// warnIneffective logs each option a file sets that changes nothing to a
// process of mode m, so that an operator who relies on one learns it at
// start-up.
func warnIneffective(m mode, cfg *config.Config, log *slog.Logger) {
	for _, line := range ineffectiveOptions(cfg) {
		if line == osloInProcess && m != modeAllInOne {
			continue
		}
		log.Warn(line)
	}
}
