package main

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// table is one printed table: its comment lines (the first names the
// benchmark, the last is the column header) and its rows, split in fields.
type table struct {
	comments []string
	rows     [][]string
}

func (tb table) title() string { return tb.comments[0] }

// columns returns the header's column names, when each is one field.
func (tb table) columns() []string {
	return strings.Fields(strings.TrimPrefix(tb.comments[len(tb.comments)-1], "#"))
}

// parseTables splits meshbench output into tables at blank lines and checks
// each is comment lines followed by at least one row.
func parseTables(t *testing.T, out string) []table {
	t.Helper()
	var tables []table
	for block := range strings.SplitSeq(strings.TrimSpace(out), "\n\n") {
		var tb table
		for line := range strings.SplitSeq(block, "\n") {
			if strings.HasPrefix(line, "#") {
				require.Empty(t, tb.rows, "comment after rows in\n%s", block)
				tb.comments = append(tb.comments, line)
			} else {
				tb.rows = append(tb.rows, strings.Fields(line))
			}
		}
		require.GreaterOrEqual(t, len(tb.comments), 2, "table without title and header:\n%s", block)
		require.NotEmpty(t, tb.rows, "table without rows:\n%s", block)
		tables = append(tables, tb)
	}
	return tables
}

func number(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err, "field %q", s)
	return v
}

// checkTable checks that every row of tb has n fields and that the fields
// at positive are numbers, not negative, and positive in the last row: a
// starved machine can print a small size's bandwidth as 0.00 at OSU's two
// decimals, but not the largest size's.
func checkTable(t *testing.T, tb table, n int, positive ...int) {
	t.Helper()
	for k, row := range tb.rows {
		require.Len(t, row, n, "%s: row %q", tb.title(), row)
		for _, i := range positive {
			v := number(t, row[i])
			require.GreaterOrEqual(t, v, 0.0, "%s: row %q, field %d", tb.title(), row, i)
			if k == len(tb.rows)-1 {
				require.Positive(t, v, "%s: last row %q, field %d", tb.title(), row, i)
			}
		}
	}
}

// checkSizes checks an OSU table: a row of size and positive figure per size.
func checkSizes(t *testing.T, tb table, sizes []int) {
	t.Helper()
	checkTable(t, tb, 2, 1)
	var got []int
	for _, row := range tb.rows {
		got = append(got, int(number(t, row[0])))
	}
	require.Equal(t, sizes, got, tb.title())
}

// leakLimit bounds the wait for a run's goroutines to end. The wait ends
// as soon as they have, so the limit is generous: on a starved machine
// pion's closing goroutines (SCTP, ICE, DTLS timers) take seconds to be
// scheduled, and a leak still fails the test, only later.
const leakLimit = time.Minute

// hangLimit is how long a meshbench run may take before the test calls
// it hung and dumps its goroutines: until shortly before the test
// binary's own deadline (go test -timeout), not a fixed budget. A cross
// link's run compiles its WASI module first, which under the race
// detector on a loaded machine (load ~25) took over 3 minutes: the
// goroutine dump of such a "hang" showed wazero's compiler running, no
// wait.
func hangLimit(t *testing.T) time.Duration {
	const margin, fallback = 30 * time.Second, 10 * time.Minute
	deadline, ok := t.Deadline()
	if !ok {
		return fallback
	}
	return max(time.Until(deadline)-margin, margin)
}

// meshbench runs meshbench with args and returns its tables by title
// prefix; it fails the test if the run fails or hangs, or leaves
// goroutines behind.
func meshbench(t *testing.T, args ...string) []table {
	t.Helper()
	base := runtime.NumGoroutine()
	cfg, err := parseArgs(args, io.Discard)
	require.NoError(t, err)
	hang := time.AfterFunc(hangLimit(t), func() {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		panic("meshbench hung: " + strings.Join(args, " "))
	})
	defer hang.Stop()
	var out bytes.Buffer
	err = run(&out, cfg)
	t.Logf("meshbench %s\n%s", strings.Join(args, " "), out.String())
	require.NoError(t, err)

	deadline := time.Now().Add(leakLimit)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			t.Fatalf("goroutines: %d before, %d after", base, runtime.NumGoroutine())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return parseTables(t, out.String())
}

// titled returns the tables whose title starts with prefix.
func titled(tables []table, prefix string) []table {
	var out []table
	for _, tb := range tables {
		if strings.HasPrefix(tb.title(), prefix) {
			out = append(out, tb)
		}
	}
	return out
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "all", cfg.mode)
	require.Equal(t, linkMemory, cfg.link)
	require.Equal(t, sizes(1, 16<<20), cfg.latSizes)
	require.Equal(t, sizes(1, 16<<20), cfg.bwSizes)
	require.Equal(t, collNames, cfg.coll.colls)
	require.Equal(t, []int{2, 4, 8, 16}, cfg.coll.ranks)
	require.Equal(t, 1, cfg.rounds)

	cfg, err = parseArgs([]string{"-link", "webrtc"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []int{8}, cfg.latSizes)
	require.Equal(t, []int{64 << 10, 1 << 20, 16 << 20}, cfg.bwSizes)
	require.Equal(t, []string{"allreduce"}, cfg.coll.colls)
	require.Equal(t, []int{4}, cfg.coll.ranks)
	require.Equal(t, []int{8}, cfg.coll.sizes)
	require.Equal(t, webrtcRounds, cfg.rounds)
	require.Equal(t, []int{4, 16}, cfg.readyRanks)
	require.Equal(t, []int{2, 9}, cfg.costRanks)

	cfg, err = parseArgs([]string{"-mode", "raw"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []int{8}, cfg.latSizes)
	require.Equal(t, []int{64 << 10, 1 << 20, 16 << 20}, cfg.bwSizes)
	require.Equal(t, webrtcRounds, cfg.rounds)

	cfg, err = parseArgs([]string{"-link", "webrtc", "-max", "4096", "-ranks", "2,3", "-colls", "bcast"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, sizes(1, 4096), cfg.latSizes)
	require.Equal(t, sizes(1, 4096), cfg.bwSizes)
	require.Equal(t, []int{2, 3}, cfg.coll.ranks)
	require.Equal(t, []string{"bcast"}, cfg.coll.colls)
	require.Empty(t, cfg.coll.hints())

	cfg, err = parseArgs([]string{"-mode", "coll", "-colls", "allgather", "-alg", "ring", "-segment", "4096"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "ring", cfg.coll.alg)
	require.Equal(t, 4096, cfg.coll.segment)
	require.Len(t, cfg.coll.hints(), 2)

	cfg, err = parseArgs([]string{"-mode", "coll", "-mpich", "run.sh", "-openmpi"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 5, cfg.rounds, "the issue's bars are medians of at least 5 rounds")
	require.True(t, cfg.openmpi)

	for _, bad := range [][]string{
		{"-mode", "nope"}, {"-link", "tcp"}, {"-iters", "0"}, {"-reps", "0"}, {"-rounds", "0"},
		{"-min", "8", "-max", "4"}, {"-ready-ranks", "1"}, {"-cost-ranks", "x"}, {"extra"}, {"-segment", "-1"},
		{"-mpich", "run.sh"}, {"-mode", "coll", "-openmpi"}, {"-mode", "coll", "-link", "webrtc", "-mpich", "run.sh"},
	} {
		_, err := parseArgs(bad, io.Discard)
		require.Error(t, err, "%q", bad)
	}
}

func TestBest(t *testing.T) {
	lat, bw := benches["latency"], benches["bw"]
	require.Equal(t, 5.0, lat.best(0, 5, false))
	require.Equal(t, 3.0, lat.best(5, 3, true))
	require.Equal(t, 3.0, lat.best(3, 5, true))
	require.Equal(t, 5.0, bw.best(3, 5, true))
	require.Equal(t, 5.0, bw.best(5, 3, true))
}

// The webrtc plans stay within the byte budget and never exceed the memory
// plans.
func TestPlans(t *testing.T) {
	for _, size := range []int{1, 8 << 10, 64 << 10, 1 << 20, 16 << 20} {
		mem, rtc := bwPlan(linkMemory, defaultIters, size), bwPlan(linkWebRTC, defaultIters, size)
		require.Equal(t, window, mem.window)
		require.LessOrEqual(t, rtc.iters, mem.iters, "size %d", size)
		require.GreaterOrEqual(t, rtc.iters, minBWWebRTC)
		require.LessOrEqual(t, rtc.window*size, max(webrtcWindowBytes, size))
		if size >= 64<<10 {
			require.LessOrEqual(t, rtc.iters*rtc.window*size, webrtcBWBytes)
		}
	}
}

func TestMemoryAll(t *testing.T) {
	tables := meshbench(t, "-iters", "20", "-max", "1024", "-ranks", "2,3", "-sizes", "8", "-colls", "allreduce,bcast")
	checkSizes(t, titled(tables, "# meshmpi latency (memory links")[0], sizes(1, 1024))
	checkSizes(t, titled(tables, "# meshmpi bw (memory links")[0], sizes(1, 1024))
	require.Len(t, titled(tables, "# meshmpi allreduce latency"), 6)
	require.Len(t, titled(tables, "# meshmpi bcast latency"), 6)
	require.Empty(t, titled(tables, "# raw"))
}

// checkComparison checks the comparison table has a row per size of each
// benchmark, in the order run.
func checkComparison(t *testing.T, tb table, want []string) {
	t.Helper()
	require.Equal(t, []string{"Test", "Size", "meshmpi", "raw-pion", "Ratio", "Bar", "Meets"}, tb.columns())
	checkTable(t, tb, 7, 1, 2, 3, 4)
	var got []string
	for _, row := range tb.rows {
		got = append(got, row[0]+"/"+row[1])
		require.Contains(t, []string{"yes", "NO", "-"}, row[6])
	}
	require.Equal(t, want, got)
}

func TestWebRTCLatency(t *testing.T) {
	tables := meshbench(t, "-link", "webrtc", "-mode", "latency", "-iters", "50")
	require.Len(t, tables, 3)
	require.Contains(t, tables[0].title(), "best of 3")
	require.Contains(t, tables[1].title(), "best of 3")
	checkSizes(t, titled(tables, "# meshmpi latency (webrtc links")[0], []int{8})
	checkSizes(t, titled(tables, "# raw pion latency")[0], []int{8})
	checkComparison(t, titled(tables, "# meshmpi vs raw pion")[0], []string{"latency(us)/8"})
}

func TestWebRTCBandwidth(t *testing.T) {
	tables := meshbench(t, "-link", "webrtc", "-mode", "bw", "-iters", "10", "-min", "2048", "-max", "4096", "-rounds", "1")
	require.Len(t, tables, 3)
	checkSizes(t, titled(tables, "# meshmpi bw (webrtc links")[0], []int{2048, 4096})
	checkSizes(t, titled(tables, "# raw pion bw")[0], []int{2048, 4096})
	checkComparison(t, titled(tables, "# meshmpi vs raw pion")[0], []string{"bw(MB/s)/2048", "bw(MB/s)/4096"})
}

func TestRaw(t *testing.T) {
	tables := meshbench(t, "-mode", "raw", "-iters", "10", "-min", "0", "-max", "4", "-rounds", "2")
	require.Len(t, tables, 2)
	want := []int{1, 2, 4} // no empty raw message
	checkSizes(t, titled(tables, "# raw pion latency")[0], want)
	checkSizes(t, titled(tables, "# raw pion bw")[0], want)
}

func TestWebRTCColl(t *testing.T) {
	tables := meshbench(t, "-mode", "coll", "-link", "webrtc", "-ranks", "4", "-colls", "allreduce", "-sizes", "8", "-iters", "100")
	require.Len(t, tables, 3)
	for _, tb := range tables {
		require.Contains(t, tb.title(), "# meshmpi allreduce latency")
		require.Contains(t, tb.title(), "(webrtc links, 4 ranks)")
		checkSizes(t, tb, []int{8})
	}
}

func TestReady(t *testing.T) {
	tables := meshbench(t, "-mode", "ready", "-ready-ranks", "2,4", "-reps", "2")
	require.Len(t, tables, 1)
	tb := tables[0]
	require.Equal(t, []string{"Ranks", "Reps", "Ready-min", "Ready-med", "First-min", "First-med", "Next-med"}, tb.columns())
	checkTable(t, tb, 7, 0, 1, 2, 3, 4, 5, 6)
	require.Equal(t, "2", tb.rows[0][0])
	require.Equal(t, "4", tb.rows[1][0])
}

func TestConnCost(t *testing.T) {
	tables := meshbench(t, "-mode", "conncost", "-cost-ranks", "2,3")
	require.Len(t, tables, 1)
	tb := tables[0]
	require.Equal(t, []string{"Ranks", "Conns", "Gor/conn", "Heap-KiB/conn", "RSS-KiB/conn"}, tb.columns())
	checkTable(t, tb, 5, 0, 1, 2, 3) // RSS may shrink, or be unknown (-1)
	require.Equal(t, []string{"2", "1"}, tb.rows[0][:2])
	require.Equal(t, []string{"3", "2"}, tb.rows[1][:2])
	number(t, tb.rows[0][4])
}

// -mode all over webrtc: every table, in order.
func TestWebRTCAll(t *testing.T) {
	tables := meshbench(t, "-link", "webrtc", "-iters", "20", "-min", "8", "-max", "16", "-rounds", "1",
		"-forms", "blocking", "-ready-ranks", "2", "-reps", "1", "-cost-ranks", "2")
	var titles []string
	for _, tb := range tables {
		titles = append(titles, strings.Fields(tb.title())[1]+" "+strings.Fields(tb.title())[2])
	}
	require.Equal(t, []string{
		"meshmpi latency", "raw pion", "meshmpi bw", "raw pion", "meshmpi vs",
		"meshmpi allreduce", "meshmpi job", "meshmpi cost",
	}, titles)
	checkComparison(t, tables[4], []string{"latency(us)/8", "latency(us)/16", "bw(MB/s)/8", "bw(MB/s)/16"})
}

func TestParseCrossArgs(t *testing.T) {
	for _, link := range []string{linkBrowserNative, linkBrowserBrowser, linkWASINative} {
		cfg, err := parseArgs([]string{"-link", link}, io.Discard)
		require.NoError(t, err)
		require.Equal(t, []int{8}, cfg.latSizes)
		require.Equal(t, []int{64 << 10, 1 << 20}, cfg.bwSizes)
		require.Equal(t, crossIters, cfg.iters)
		require.Equal(t, webrtcRounds, cfg.rounds)

		cfg, err = parseArgs([]string{"-link", link, "-mode", "bw", "-min", "1024", "-max", "2048", "-iters", "7", "-rounds", "1"}, io.Discard)
		require.NoError(t, err)
		require.Equal(t, []int{1024, 2048}, cfg.bwSizes)
		require.Equal(t, 7, cfg.iters)
		require.Equal(t, 1, cfg.rounds)

		for _, mode := range []string{"coll", "raw", "ready", "conncost"} {
			_, err = parseArgs([]string{"-link", link, "-mode", mode}, io.Discard)
			require.ErrorContains(t, err, "measures latency and bw", mode)
		}
	}
	_, err := parseArgs([]string{"-link", "carrier-pigeon"}, io.Discard)
	require.ErrorContains(t, err, "wasi-native")
}
