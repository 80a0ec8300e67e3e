//go:build js && wasm

package meshmpi

import (
	"strings"
	"syscall/js"

	"github.com/meshmpi/meshmpi/internal/jsglue"
	"github.com/meshmpi/meshmpi/signaling"
)

// pageConsole: a page runs one rank (meshmpi.js), so the console a rank
// that joins a job there finds is its own, whether it joined through
// Init, Main or Join.
const pageConsole = true

// jsConsole is a browser rank's console: js/meshmpi.js keeps the lines
// the program writes (the page still shows them) in a bounded queue,
// globalThis.meshmpiConsole, which take drains. Outside a page started by
// meshmpi.js there is none, and nothing is reported.
type jsConsole struct{ q js.Value }

// captureConsole returns the page's console queue, nil without one.
func captureConsole() consoleCapture {
	q := js.Global().Get("meshmpiConsole")
	if q.Type() != js.TypeObject {
		return nil
	}
	return jsConsole{q}
}

// take implements consoleCapture: the queue's take() gives one string,
// a line each, "o" (standard output) or "e" (error) then the text, and
// empties the queue.
func (c jsConsole) take(dst []signaling.ConsoleLine) []signaling.ConsoleLine {
	var v js.Value
	if jsglue.Try(func() { v = c.q.Call("take") }) != nil || v.Type() != js.TypeString {
		return dst
	}
	for s := v.String(); s != ""; {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		if line == "" {
			continue
		}
		stream := signaling.StreamOut
		if line[0] == 'e' {
			stream = signaling.StreamErr
		}
		dst = append(dst, signaling.ConsoleLine{Stream: stream, Text: signaling.ClipText(line[1:], signaling.MaxConsoleLineLen)})
	}
	return dst
}

// stop implements consoleCapture: the page's writes are synchronous, so
// the queue holds every line written before; the partial ones end here.
func (c jsConsole) stop() { _ = jsglue.Try(func() { c.q.Call("flush") }) }
