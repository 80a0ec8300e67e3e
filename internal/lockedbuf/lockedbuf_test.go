package lockedbuf

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Writers at once: every write lands whole (run with -race).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	const writers, lines = 8, 100
	for w := range writers {
		wg.Go(func() {
			for range lines {
				if w%2 == 0 {
					b.Write([]byte("even line\n"))
				} else {
					b.WriteString("odd line\n")
				}
				_ = b.String()
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, got, writers*lines)
	for _, l := range got {
		require.Contains(t, []string{"even line", "odd line"}, l)
	}
}
