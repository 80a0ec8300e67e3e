//go:build js || wasip1

package main

import (
	"context"
	"errors"
	"io"

	"github.com/meshmpi/meshmpi"
)

// Built for a browser or WASI, meshbench has memory links only: the
// embedded signaling server and the raw pion pair need a native build.

var errNative = errors.New("webrtc and cross-target links, -mode raw, ready and conncost need a native build")

type jobServer struct{}

func startJobServer() (*jobServer, error)            { return nil, errNative }
func (*jobServer) spec(int) (meshmpi.JobSpec, error) { return meshmpi.JobSpec{}, errNative }
func (*jobServer) close() error                      { return nil }

type rawPair struct{}

func newRawPair(context.Context) (*rawPair, error) { return nil, errNative }
func (*rawPair) close()                            {}

type rawBench struct{}

func newRawBench(*rawPair, bench, []int, int) *rawBench { return &rawBench{} }
func (*rawBench) measure(int) (float64, error)          { return 0, errNative }
func printRaw(io.Writer, bench, []int, []float64, int)  {}
func runRaw(io.Writer, bench, []int, int, int) error    { return errNative }

func runCross(io.Writer, config) error { return errNative }
