package mesh

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshmpi/meshmpi/signaling"
	"github.com/stretchr/testify/require"
)

func consoleTexts(ls []signaling.ConsoleLine) []string {
	var s []string
	for _, l := range ls {
		s = append(s, l.Stream+":"+l.Text)
	}
	return s
}

func TestConsoleLines(t *testing.T) {
	c := NewConsole(3)
	out, errw := c.Writer(signaling.StreamOut), c.Writer(signaling.StreamErr)
	fmt.Fprint(out, "a\r\nb")
	fmt.Fprint(errw, "x\n")
	fmt.Fprint(out, "c\n")
	require.Equal(t, []string{"out:a", "err:x", "out:bc"}, consoleTexts(c.Take(nil)))
	require.Empty(t, c.Take(nil))

	// the newest lines stay, in order
	for i := range 7 {
		fmt.Fprintf(out, "%d\n", i)
	}
	require.Equal(t, []string{"out:4", "out:5", "out:6"}, consoleTexts(c.Take(nil)))

	// long lines are cut, and an unfinished one ends at Flush
	fmt.Fprint(out, strings.Repeat("é", 1000)+"\n")
	fmt.Fprint(errw, strings.Repeat("z", 5000))
	fmt.Fprint(errw, strings.Repeat("z", 5000))
	c.Flush()
	ls := c.Take(nil)
	require.Len(t, ls, 2)
	require.Len(t, ls[0].Text, signaling.MaxConsoleLineLen)
	require.Equal(t, strings.Repeat("z", signaling.MaxConsoleLineLen), ls[1].Text)
	require.Equal(t, signaling.StreamErr, ls[1].Stream)
}
