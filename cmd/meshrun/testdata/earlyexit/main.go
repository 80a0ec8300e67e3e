// Earlyexit is meshrun's job whose rank 2 crashes before it reaches the
// signaling server (status 3, before Init). The others' Init must fail
// (the job cannot form) well before their join timeout, so they exit by
// themselves with status 1, and meshrun exits with 3.
package main

import (
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

func main() {
	if os.Getenv(meshmpi.EnvRank) == "2" {
		fmt.Println("rank 2 crashing before Init")
		os.Exit(3)
	}
	w, err := meshmpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "earlyexit: init:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "earlyexit: the job formed without rank 2: rank", w.Rank())
	os.Exit(5)
}
