//go:build unix || windows

package main

import (
	"bytes"
	"io"
	"sync"
)

// maxPartial bounds the bytes of an unfinished line a lineWriter holds back
// waiting for its newline; a longer one goes out in pieces, each a line.
const maxPartial = 64 << 10

// lockedWriter passes each Write to w whole, one at a time: the ranks'
// lineWriters and meshrun's own messages share one per output stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineWriter is one rank's standard output or error: it puts prefix before
// every line and hands out only whole lines, several in one Write, so
// lines of ranks sharing out never mix. Flush sends an unfinished last
// line.
type lineWriter struct {
	out    io.Writer // a lockedWriter
	prefix []byte

	mu      sync.Mutex
	partial []byte // the current line so far, without the prefix
}

func newLineWriter(out io.Writer, prefix string) *lineWriter {
	return &lineWriter{out: out, prefix: []byte(prefix)}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	var lines []byte
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, w.prefix...)
		lines = append(lines, w.partial...)
		lines = append(lines, p[:i+1]...)
		w.partial, p = w.partial[:0], p[i+1:]
	}
	w.partial = append(w.partial, p...)
	if len(w.partial) >= maxPartial {
		lines = w.appendPartial(lines)
	}
	if len(lines) == 0 {
		return n, nil
	}
	if _, err := w.out.Write(lines); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes the unfinished last line, if any, with a newline.
func (w *lineWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) == 0 {
		return nil
	}
	_, err := w.out.Write(w.appendPartial(nil))
	return err
}

// appendPartial appends the unfinished line as a whole one and forgets it.
func (w *lineWriter) appendPartial(lines []byte) []byte {
	lines = append(lines, w.prefix...)
	lines = append(lines, w.partial...)
	lines = append(lines, '\n')
	w.partial = w.partial[:0]
	return lines
}
