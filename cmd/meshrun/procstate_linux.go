package main

import (
	"bytes"
	"os"
	"strconv"
)

// processStopped reports whether the process pid is stopped by a signal
// (SIGSTOP, SIGTSTP …: state T in /proc/PID/stat), so that it cannot
// answer its peers. A process stopped by a tracer (state t, a debugger)
// is not: someone is looking at it on purpose.
func processStopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "pid (comm) S …": comm may hold spaces and parentheses, the state
	// follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'T'
}
