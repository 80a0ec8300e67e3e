package mesh

import (
	"sync"

	"github.com/meshmpi/meshmpi/signaling"
)

// Console keeps the lines a rank writes to its standard output and error
// for its telemetry reporter: writers split what they are given into
// lines, each cut to signaling.MaxConsoleLineLen bytes, and a bounded
// queue keeps the newest lines until Take (older ones go when it is
// full). It is safe for concurrent use.
type Console struct {
	mu    sync.Mutex
	lines []signaling.ConsoleLine // queued, oldest first from head
	head  int                     // where the oldest is, once lines is full
	max   int
	part  [2][]byte // each stream's unfinished line
}

// NewConsole returns a console that keeps at most n lines between takes
// (at least one).
func NewConsole(n int) *Console { return &Console{max: max(1, n)} }

// Writer returns a writer of stream (signaling.StreamOut or StreamErr)
// into c: it never fails and never blocks on the reporter.
func (c *Console) Writer(stream string) *ConsoleWriter {
	return &ConsoleWriter{c: c, stream: stream}
}

// ConsoleWriter is one stream of a Console (Console.Writer).
type ConsoleWriter struct {
	c      *Console
	stream string
}

func (w *ConsoleWriter) index() int {
	if w.stream == signaling.StreamErr {
		return 1
	}
	return 0
}

// Write implements io.Writer: complete lines go to the queue, the rest
// waits for its newline (or Flush).
func (w *ConsoleWriter) Write(b []byte) (int, error) {
	n := len(b)
	c, i := w.c, w.index()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(b) > 0 {
		nl := -1
		for j, x := range b {
			if x == '\n' {
				nl = j
				break
			}
		}
		if nl < 0 {
			// keep at most one line's worth: the rest would be cut anyway
			room := signaling.MaxConsoleLineLen + 4 - len(c.part[i])
			c.part[i] = append(c.part[i], b[:max(0, min(len(b), room))]...)
			break
		}
		line := b[:nl]
		if len(c.part[i]) > 0 {
			c.part[i] = append(c.part[i], line[:min(len(line), signaling.MaxConsoleLineLen+4)]...)
			line = c.part[i]
		}
		c.addLocked(w.stream, line)
		c.part[i] = c.part[i][:0]
		b = b[nl+1:]
	}
	return n, nil
}

// addLocked queues one line, in place of the oldest when the queue is
// full.
func (c *Console) addLocked(stream string, line []byte) {
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	text := string(line[:min(len(line), signaling.MaxConsoleLineLen+4)])
	l := signaling.ConsoleLine{Stream: stream, Text: signaling.ClipText(text, signaling.MaxConsoleLineLen)}
	if len(c.lines) < c.max {
		c.lines = append(c.lines, l)
		return
	}
	c.lines[c.head] = l // a ring once full: head is the oldest
	c.head = (c.head + 1) % c.max
}

// Flush queues the streams' unfinished lines as lines: the program ended
// without their newline.
func (c *Console) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, stream := range []string{signaling.StreamOut, signaling.StreamErr} {
		if len(c.part[i]) > 0 {
			c.addLocked(stream, c.part[i])
			c.part[i] = c.part[i][:0]
		}
	}
}

// Take appends the queued lines to dst, oldest first, and empties the
// queue.
func (c *Console) Take(dst []signaling.ConsoleLine) []signaling.ConsoleLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	dst = append(append(dst, c.lines[c.head:]...), c.lines[:c.head]...)
	clear(c.lines)
	c.lines, c.head = c.lines[:0], 0
	return dst
}
