//go:build cgo && !linux

package abi

// gettid has no thread id to give outside Linux; every thread counts as
// the main one.
func gettid() int { return 0 }
