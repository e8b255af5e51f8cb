package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The bench reads the servers' CPU and memory from /proc: it measures
// processes it did not build (upstream's Python) the same way as ours.

// procMemory is what /proc/<pid>/status says of a process's memory, in KiB.
type procMemory struct {
	rss, hwm int
}

// parseStatus reads VmRSS and VmHWM (the peak RSS since start or since the
// last reset through clear_refs) from the text of /proc/<pid>/status.
func parseStatus(text string) (procMemory, error) {
	var m procMemory
	found := 0
	for line := range strings.SplitSeq(text, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(val), " kB"))
		if err != nil {
			return m, fmt.Errorf("status %s: %w", key, err)
		}
		found++
		if key == "VmRSS" {
			m.rss = kb
		} else {
			m.hwm = kb
		}
	}
	if found != 2 {
		return m, errors.New("status: no VmRSS/VmHWM (a kernel thread or a zombie)")
	}
	return m, nil
}

// procStat is the part of /proc/<pid>/stat the bench uses.
type procStat struct {
	ppid int
	// cpu is utime+stime; children is cutime+cstime, the CPU of
	// children that have exited and been waited for.
	cpu, children time.Duration
}

// clockTick is USER_HZ, 100 on every Linux ABI Go supports.
const clockTick = 10 * time.Millisecond

// parseStat reads /proc/<pid>/stat. The command name, in parentheses, may
// hold spaces and parentheses: fields are counted after the last ')'.
func parseStat(text string) (procStat, error) {
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return procStat{}, errors.New("stat: no command name")
	}
	// f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17.
	f := strings.Fields(text[i+1:])
	if len(f) < 15 {
		return procStat{}, errors.New("stat: short")
	}
	var v [5]int64
	for j, k := range []int{1, 11, 12, 13, 14} {
		n, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("stat field %d: %w", k+3, err)
		}
		v[j] = n
	}
	return procStat{
		ppid:     int(v[0]),
		cpu:      time.Duration(v[1]+v[2]) * clockTick,
		children: time.Duration(v[3]+v[4]) * clockTick,
	}, nil
}

func readStatus(pid int) (procMemory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, fmt.Errorf("memory of %d: %w", pid, err)
	}
	return parseStatus(string(b))
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, fmt.Errorf("cpu of %d: %w", pid, err)
	}
	return parseStat(string(b))
}

// resetPeak sets the process's VmHWM back to its current RSS (clear_refs
// 5, Linux 4.0), so that the next read gives the peak of one phase.
func resetPeak(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak RSS of %d: %w", pid, err)
	}
	return nil
}

// treeCPU is the CPU a process and all its descendants have used: live
// descendants are found through their parent field, exited ones are in
// the cutime/cstime of whoever waited for them.
func treeCPU(root int) (time.Duration, error) {
	rs, err := readStat(root)
	if err != nil {
		return 0, err
	}
	stats := map[int]procStat{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("process tree: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		// A process may exit between the listing and the read.
		if st, err := readStat(pid); err == nil {
			stats[pid] = st
		}
	}
	return sumTree(root, rs, stats), nil
}

// sumTree adds the CPU of root and of every process below it in stats.
func sumTree(root int, rs procStat, stats map[int]procStat) time.Duration {
	children := map[int][]int{}
	for pid, st := range stats {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	total := rs.cpu + rs.children
	queue := children[root]
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		st := stats[pid]
		total += st.cpu + st.children
		queue = append(queue, children[pid]...)
	}
	return total
}

// relPath is target relative to the folder of from, with forward
// slashes, for links in a markdown file.
func relPath(from, target string) string {
	r, err := filepath.Rel(filepath.Dir(from), target)
	if err != nil {
		return filepath.ToSlash(target)
	}
	return filepath.ToSlash(r)
}
