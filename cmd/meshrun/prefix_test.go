//go:build unix || windows

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ranks writing at once, in pieces that split their lines anywhere: every
// output line is one whole line of one rank, and each rank's lines keep
// their order.
func TestLineWriterConcurrent(t *testing.T) {
	const writers, lines = 8, 500
	var buf bytes.Buffer
	out := &lockedWriter{w: &buf}
	var wg sync.WaitGroup
	for w := range writers {
		lw := newLineWriter(out, fmt.Sprintf("[%d] ", w))
		wg.Go(func() {
			var text []byte
			for i := range lines {
				text = fmt.Appendf(text, "writer %d line %d %s\n", w, i, strings.Repeat("x", i%37))
			}
			text = fmt.Appendf(text, "writer %d unfinished", w)
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for len(text) > 0 {
				n := min(len(text), 1+rng.IntN(100))
				k, err := lw.Write(text[:n])
				assert.NoError(t, err)
				assert.Equal(t, n, k)
				text = text[n:]
			}
			assert.NoError(t, lw.Flush())
		})
	}
	wg.Wait()

	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, got, writers*(lines+1))
	next := make([]int, writers)
	for _, line := range got {
		var w, w2 int
		_, err := fmt.Sscanf(line, "[%d] writer %d", &w, &w2)
		require.NoError(t, err, "line %q", line)
		require.Equal(t, w, w2, "line %q has another rank's prefix", line)
		if next[w] == lines {
			require.Equal(t, fmt.Sprintf("[%d] writer %d unfinished", w, w), line)
			next[w]++
			continue
		}
		want := fmt.Sprintf("[%d] writer %d line %d %s", w, w, next[w], strings.Repeat("x", next[w]%37))
		require.Equal(t, want, line)
		next[w]++
	}
	for w, n := range next {
		require.Equal(t, lines+1, n, "writer %d", w)
	}
}

func TestLineWriterPartialLines(t *testing.T) {
	var buf bytes.Buffer
	lw := newLineWriter(&lockedWriter{w: &buf}, "[3] ")
	write := func(s string) {
		n, err := lw.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}

	write("")
	write("hel")
	require.Empty(t, buf.String(), "a line goes out only when it is finished")
	write("lo\nwor")
	require.Equal(t, "[3] hello\n", buf.String())
	write("ld\n\nlast")
	require.Equal(t, "[3] hello\n[3] world\n[3] \n", buf.String())
	require.NoError(t, lw.Flush())
	require.Equal(t, "[3] hello\n[3] world\n[3] \n[3] last\n", buf.String(), "Flush ends the last line")
	require.NoError(t, lw.Flush())
	require.Equal(t, "[3] hello\n[3] world\n[3] \n[3] last\n", buf.String(), "nothing left to flush")

	// A line that never ends goes out in pieces, not into an ever larger buffer.
	buf.Reset()
	long := strings.Repeat("y", maxPartial+10)
	write(long)
	require.Equal(t, "[3] "+long+"\n", buf.String())
	write("z")
	require.NoError(t, lw.Flush())
	require.Equal(t, "[3] "+long+"\n[3] z\n", buf.String())
}
