package main

import (
	"fmt"
	"time"
)

// printStats says that a browser tab has no process statistics to print
// (-stats is for soaks of native ranks); the code that reads them would
// only make every tab download more.
func printStats(time.Duration) {
	fmt.Println("-stats: not in a browser tab")
}
