//go:build !js && !wasip1

package meshmpi

import (
	"errors"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi/mesh"
	"github.com/meshmpi/meshmpi/signaling"
)

// pageConsole: a native process may run several ranks (Run, Join): only
// one that is the process's rank (Init, Main) has the console.
const pageConsole = false

// consoleLines bounds the console lines a rank keeps between reports.
const consoleLines = 1024

// stdioTee captures a native rank's console: os.Stdout and os.Stderr
// become pipes, for the rest of the process, whose readers copy
// everything to the real files and, line by line, to the reporter. The
// file descriptors stay as they were, so what the Go runtime writes to
// them itself (a panic's trace) still reaches them if the process dies.
// The standard logger follows os.Stderr when it wrote there. The swap
// happens as the rank joins, before its mesh starts the goroutines that
// read os.Stderr (pion's loggers), and is never undone: a writer made
// meanwhile (a bufio.Writer over os.Stdout) keeps working after Finalize.
type stdioTee struct {
	c                *mesh.Console
	realOut, realErr *os.File
	outR, errR       *os.File // the pipes' read ends

	stopOnce sync.Once
	drained  chan struct{} // each reader sends once its pipe is empty after stop
}

// captureConsole tees the process's standard output and error into a
// console; nil if the pipes cannot be made.
func captureConsole() consoleCapture {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil
	}
	t := &stdioTee{c: mesh.NewConsole(consoleLines), realOut: os.Stdout, realErr: os.Stderr,
		outR: outR, errR: errR, drained: make(chan struct{}, 2)}
	go t.copy(outR, t.realOut, t.c.Writer(signaling.StreamOut))
	go t.copy(errR, t.realErr, t.c.Writer(signaling.StreamErr))
	os.Stdout, os.Stderr = outW, errW
	if log.Writer() == t.realErr {
		log.SetOutput(errW)
	}
	return t
}

// copy forwards one pipe for the life of the process.
func (t *stdioTee) copy(r, real *os.File, line io.Writer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = real.Write(buf[:n])
			_, _ = line.Write(buf[:n])
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded): // empty since stop: drained
			t.drained <- struct{}{}
			_ = r.SetReadDeadline(time.Time{})
		case err != nil:
			return
		}
	}
}

func (t *stdioTee) take(dst []signaling.ConsoleLine) []signaling.ConsoleLine { return t.c.Take(dst) }

// stop waits (briefly) until the readers have taken in what was written
// before, for the reporter's last report; the pipes go on forwarding.
func (t *stdioTee) stop() {
	t.stopOnce.Do(func() {
		waiting := 0
		for _, r := range []*os.File{t.outR, t.errR} {
			// a read that finds the pipe empty for 20 ms ends with the
			// deadline: the reader has all that was written before
			if r.SetReadDeadline(time.Now().Add(20*time.Millisecond)) == nil {
				waiting++
			}
		}
		limit := time.NewTimer(time.Second)
		defer limit.Stop()
	wait:
		for range waiting {
			select {
			case <-t.drained:
			case <-limit.C:
				break wait
			}
		}
		t.c.Flush()
	})
}
