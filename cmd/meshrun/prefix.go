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
	// file, when set, gets the same lines without the prefix, at the
	// same moments (--output-dir); its errors are logged once and
	// otherwise ignored: the terminal's copy is the one that counts
	file    io.Writer
	fileErr func(error) // called with file's first error; may be nil
	fileBad bool
	// onLine, when set, sees every whole line the rank wrote, without
	// the prefix or the newline, as it passes (hang.go's tap)
	onLine func(line []byte)

	mu      sync.Mutex
	partial []byte // the current line so far, without the prefix
	holding bool   // lines wait in held for their prefix (release)
	held    []byte // whole lines waiting, without the prefix
}

func newLineWriter(out io.Writer, prefix string) *lineWriter {
	return &lineWriter{out: out, prefix: []byte(prefix)}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	var lines []byte
	raw := 0 // bytes of lines without their prefixes
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		lines = w.appendPrefix(lines)
		lines = append(lines, w.partial...)
		lines = append(lines, p[:i+1]...)
		raw += len(w.partial) + i + 1
		w.partial, p = w.partial[:0], p[i+1:]
	}
	w.partial = append(w.partial, p...)
	if len(w.partial) >= maxPartial {
		raw += len(w.partial) + 1
		lines = w.appendPartial(lines)
	}
	pre := len(w.prefix) // the prefix of each line, or none while holding
	if w.holding {
		pre = 0
	}
	if err := w.emit(lines, raw); err != nil {
		return 0, err
	}
	if w.onLine != nil { // after the lines went out: what onLine makes of them follows them
		for rest := lines; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			w.onLine(rest[pre:i])
			rest = rest[i+1:]
		}
	}
	return n, nil
}

// Flush writes the unfinished last line, if any, with a newline, and
// the lines w holds, with the prefix it has.
func (w *lineWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var lines []byte
	raw := 0
	if len(w.partial) > 0 {
		raw = len(w.partial) + 1
		lines = w.appendPartial(nil)
	}
	if err := w.emit(lines, raw); err != nil {
		return err
	}
	return w.unhold()
}

// appendPrefix appends the prefix, unless w holds its lines (they get
// theirs when released). w.mu is held.
func (w *lineWriter) appendPrefix(lines []byte) []byte {
	if w.holding {
		return lines
	}
	return append(lines, w.prefix...)
}

// emit writes whole lines, or holds them; raw is how many bytes they
// are without their prefixes. w.mu is held.
func (w *lineWriter) emit(lines []byte, raw int) error {
	if len(lines) == 0 {
		return nil
	}
	if w.holding {
		w.held = append(w.held, lines...)
		if len(w.held) >= maxHeld {
			return w.unhold()
		}
		return nil
	}
	if w.file != nil && raw > 0 {
		w.toFile(unprefixed(lines, len(w.prefix), raw))
	}
	_, err := w.out.Write(lines)
	return err
}

// unprefixed returns lines, each of which starts with a prefix of n
// bytes, without the prefixes: raw bytes.
func unprefixed(lines []byte, n, raw int) []byte {
	if n == 0 {
		return lines
	}
	b := make([]byte, 0, raw)
	for rest := lines; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		b = append(b, rest[n:i+1]...)
		rest = rest[i+1:]
	}
	return b
}

// toFile copies lines to the file, until it fails. w.mu is held.
func (w *lineWriter) toFile(lines []byte) {
	if w.fileBad {
		return
	}
	if _, err := w.file.Write(lines); err != nil {
		w.fileBad = true
		if w.fileErr != nil {
			w.fileErr(err)
		}
	}
}

// appendPartial appends the unfinished line as a whole one and forgets it.
func (w *lineWriter) appendPartial(lines []byte) []byte {
	lines = w.appendPrefix(lines)
	lines = append(lines, w.partial...)
	lines = append(lines, '\n')
	w.partial = w.partial[:0]
	return lines
}

// maxHeld bounds the bytes of whole lines a holding lineWriter keeps;
// beyond, they go out with the prefix it has.
const maxHeld = 64 << 10

// hold makes w keep its lines until release gives them their prefix:
// the lines of a rank whose number the server gives, until it is known.
func (w *lineWriter) hold() {
	w.mu.Lock()
	w.holding = true
	w.mu.Unlock()
}

// release gives w's lines prefix from now on, and writes those it held
// with it.
func (w *lineWriter) release(prefix string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prefix = []byte(prefix)
	_ = w.unhold()
}

// drop forgets the lines w holds and its unfinished line, and returns
// their size: the output of a try that did not count.
func (w *lineWriter) drop() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.held) + len(w.partial)
	w.held, w.partial = w.held[:0], w.partial[:0]
	return n
}

// unhold stops holding and writes the held lines with the prefix. w.mu
// is held.
func (w *lineWriter) unhold() error {
	w.holding = false
	if len(w.held) == 0 {
		return nil
	}
	if w.file != nil {
		w.toFile(w.held)
	}
	var lines []byte
	for rest := w.held; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n') // every held line ends with one
		lines = append(lines, w.prefix...)
		lines = append(lines, rest[:i+1]...)
		rest = rest[i+1:]
	}
	w.held = w.held[:0]
	_, err := w.out.Write(lines)
	return err
}
