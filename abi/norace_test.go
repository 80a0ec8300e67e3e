//go:build cgo && !race

package abi

const raceEnabled = false
