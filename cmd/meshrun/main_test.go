//go:build unix

package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// The programs the end-to-end tests run, as absolute directories: tests
// may change the working directory.
var (
	piBinary       = buildOnce("../../examples/pi")
	failrankBinary = buildOnce("testdata/failrank")
	abortBinary    = buildOnce("testdata/abortrank")
	deadBinary     = buildOnce("testdata/deadrank")
	looprankBinary = buildOnce("testdata/looprank")
	earlyBinary    = buildOnce("testdata/earlyexit")
)

// buildOnce returns a function that builds the package in dir the first
// time it is called and returns the executable's path.
func buildOnce(dir string) func(t *testing.T) string {
	abs, err := filepath.Abs(dir)
	build := testbin.Once(gobuild.Go{}, abs, filepath.Base(abs))
	return func(t *testing.T) string {
		t.Helper()
		require.NoError(t, err)
		exe, err := build()
		require.NoError(t, err)
		return exe
	}
}

func TestParseArgs(t *testing.T) {
	loopback := map[string]string{meshmpi.SettingNetwork: "loopback"}
	for _, tc := range []struct {
		name string
		args []string
		want config // checked when err is ""
		err  string // a substring of the error
		// noMemCheck: want.memCheck is false (--mem-check=false)
		noMemCheck bool
	}{
		{
			name: "package",
			args: []string{"-n", "4", "./examples/pi"},
			want: config{n: 4, target: "./examples/pi", settings: loopback, grace: 2 * time.Second},
		},
		{
			name: "flags before the target, arguments after it",
			args: []string{"-n", "2", "--coll", "allreduce=ring", "-coll", "bcast=binomial", "--timeout", "1m", "--grace=1s", "-v",
				"--join-timeout", "30s", "./pi", "-n", "9", "--coll", "x"},
			want: config{n: 2, target: "./pi", args: []string{"-n", "9", "--coll", "x"},
				settings: map[string]string{"net": "loopback", "coll.allreduce": "ring", "coll.bcast": "binomial"},
				timeout:  time.Minute, grace: time.Second, joinTimeout: 30 * time.Second, verbose: true},
		},
		{
			name: "binary",
			args: []string{"-n", "1", "/bin/prog"},
			want: config{n: 1, target: "/bin/prog", settings: loopback, grace: 2 * time.Second},
		},
		{
			name: "-- after the target ends meshrun's command line",
			args: []string{"-n", "2", "./pi", "--", "-n", "5"},
			want: config{n: 2, target: "./pi", args: []string{"-n", "5"}, settings: loopback, grace: 2 * time.Second},
		},
		{
			name: "-- before the target, as with mpiexec",
			args: []string{"-n", "2", "--", "./pi", "-x"},
			want: config{n: 2, target: "./pi", args: []string{"-x"}, settings: loopback, grace: 2 * time.Second},
		},
		{
			name: "a second -- is the program's",
			args: []string{"-n", "2", "--", "./pi", "--", "--", "a", "--"},
			want: config{n: 2, target: "./pi", args: []string{"--", "a", "--"}, settings: loopback, grace: 2 * time.Second},
		},
		{
			name: "join with --",
			args: []string{"join", "ws://h/ws?job=j&token=t", "-n", "2", "--", "./pi", "-n", "9"},
			want: config{n: 2, first: meshmpi.AnyRank, signal: "ws://h/ws", job: "j", token: "t", target: "./pi", args: []string{"-n", "9"}, grace: 2 * time.Second},
		},
		{
			name:       "--mem-check=false",
			args:       []string{"-n", "2", "--mem-check=false", "./pi"},
			want:       config{n: 2, target: "./pi", settings: loopback, grace: 2 * time.Second},
			noMemCheck: true,
		},
		{
			name: "--report-hang",
			args: []string{"-n", "2", "--report-hang", "30s", "./pi"},
			want: config{n: 2, target: "./pi", settings: loopback, grace: 2 * time.Second, reportHang: 30 * time.Second},
		},
		{name: "negative --report-hang", args: []string{"-n", "2", "--report-hang", "-1s", "./pi"}, err: "--report-hang"},
		{name: "-- and no target", args: []string{"-n", "2", "--"}, err: "no package or binary"},
		{name: "flags after the target belong to it", args: []string{"./pi", "-n", "4"}, err: "-n is required"},
		{name: "no -n", args: []string{"./pi"}, err: "-n is required"},
		{name: "-np", args: []string{"-np", "0", "./pi"}, err: "-n 0"},
		{name: "zero ranks", args: []string{"-n", "0", "./pi"}, err: "-n 0"},
		{name: "negative ranks", args: []string{"-n", "-3", "./pi"}, err: "-n -3"},
		{name: "too many ranks", args: []string{"-n", "100000", "./pi"}, err: "-n 100000"},
		{name: "-n not a number", args: []string{"-n", "four", "./pi"}, err: `invalid value "four" for flag -n`},
		{name: "no target", args: []string{"-n", "2"}, err: "no package or binary"},
		{name: "nothing", args: nil, err: "no package or binary"},
		{name: "unknown flag", args: []string{"-n", "2", "--nope", "./pi"}, err: "not defined: -nope"},
		{name: "help", args: []string{"-h"}, err: flag.ErrHelp.Error()},
		{name: "bad coll", args: []string{"-n", "2", "--coll", "allreduce", "./pi"}, err: "want collective=algorithm"},
		{name: "unknown collective", args: []string{"-n", "2", "--coll", "allreduse=ring", "./pi"}, err: `no collective "allreduse"`},
		{name: "unknown algorithm", args: []string{"-n", "2", "--coll", "allreduce=rings", "./pi"}, err: `allreduce has no algorithm "rings"`},
		{name: "negative grace", args: []string{"-n", "2", "--grace", "-1s", "./pi"}, err: "--grace"},
		{name: "negative timeout", args: []string{"-n", "2", "--timeout", "-1s", "./pi"}, err: "--timeout"},
		{name: "rank without a job", args: []string{"-n", "2", "--rank", "1", "./pi"}, err: "--rank applies"},
		{
			name: "existing job",
			args: []string{"-n", "3", "--signal", "ws://h:1/ws", "--job", "j", "--token", "t", "./pi", "a"},
			want: config{n: 3, first: meshmpi.AnyRank, signal: "ws://h:1/ws", job: "j", token: "t", target: "./pi", args: []string{"a"}, grace: 2 * time.Second},
		},
		{
			name: "existing job from a rank",
			args: []string{"-n", "3", "--signal", "wss://h/ws", "--job", "j", "--token", "t", "--rank", "4", "./pi"},
			want: config{n: 3, first: 4, signal: "wss://h/ws", job: "j", token: "t", target: "./pi", grace: 2 * time.Second},
		},
		{name: "signal alone", args: []string{"-n", "2", "--signal", "ws://h/ws", "./pi"}, err: "go together"},
		{name: "job and token without signal", args: []string{"-n", "2", "--job", "j", "--token", "t", "./pi"}, err: "go together"},
		{name: "signal without token", args: []string{"-n", "2", "--signal", "ws://h/ws", "--job", "j", "./pi"}, err: "go together"},
		{name: "signal not a websocket", args: []string{"-n", "2", "--signal", "http://h/ws", "--job", "j", "--token", "t", "./pi"}, err: "want ws://"},
		{name: "coll with an existing job", args: []string{"-n", "2", "--signal", "ws://h/ws", "--job", "j", "--token", "t", "--coll", "allreduce=ring", "./pi"}, err: "--coll"},
		{name: "negative rank", args: []string{"-n", "2", "--signal", "ws://h/ws", "--job", "j", "--token", "t", "--rank", "-2", "./pi"}, err: "--rank -2"},
		{
			name: "join",
			args: []string{"join", "ws://h/ws", "--job", "j", "--token", "t", "--rank", "1", "./pi", "-steps", "5"},
			want: config{n: 1, first: 1, signal: "ws://h/ws", job: "j", token: "t", target: "./pi", args: []string{"-steps", "5"}, grace: 2 * time.Second},
		},
		{
			name: "join with the URL after the flags, any rank",
			args: []string{"join", "--job", "j", "--token", "t", "--timeout", "1h", "ws://h/ws", "./pi"},
			want: config{n: 1, first: meshmpi.AnyRank, signal: "ws://h/ws", job: "j", token: "t", target: "./pi", timeout: time.Hour, grace: 2 * time.Second},
		},
		{name: "join without a URL", args: []string{"join", "--job", "j", "--token", "t"}, err: "URL"},
		{name: "join without a target", args: []string{"join", "ws://h/ws", "--job", "j", "--token", "t"}, err: "no package or binary"},
		{name: "join without a token", args: []string{"join", "ws://h/ws", "--job", "j", "./pi"}, err: "--job and --token are required"},
		{
			name: "join with -n, as many ranks from another host",
			args: []string{"join", "ws://h/ws", "--job", "j", "--token", "t", "-n", "3", "--wasi", "1", "./pi"},
			want: config{n: 3, wasi: 1, first: meshmpi.AnyRank, signal: "ws://h/ws", job: "j", token: "t", target: "./pi", grace: 2 * time.Second},
		},
		{name: "join with -n 0", args: []string{"join", "ws://h/ws", "--job", "j", "--token", "t", "-n", "0", "./pi"}, err: "join -n 0"},
		{name: "join with coll", args: []string{"join", "ws://h/ws", "--job", "j", "--token", "t", "--coll", "allreduce=ring", "./pi"}, err: "not defined: -coll"},
		{
			name: "mixed",
			args: []string{"-n", "4", "--wasi", "2", "./pi"},
			want: config{n: 4, wasi: 2, target: "./pi", settings: loopback, grace: 2 * time.Second},
		},
		{
			name: "native",
			args: []string{"-n", "2", "--native", "--runtime", "wazero", "./pi"},
			want: config{n: 2, native: true, runtime: "wazero", target: "./pi", settings: loopback, grace: 2 * time.Second},
		},
		{name: "native and wasi", args: []string{"-n", "4", "--native", "--wasi", "2", "./pi"}, err: "choose one"},
		{name: "more wasi than ranks", args: []string{"-n", "2", "--wasi", "3", "./pi"}, err: "--wasi 3"},
		{
			name: "wasmtime",
			args: []string{"-n", "4", "--wasi", "2", "--runtime", "wasmtime", "./pi"},
			want: config{n: 4, wasi: 2, runtime: "wasmtime", target: "./pi", settings: loopback, grace: 2 * time.Second},
		},
		{name: "unknown runtime", args: []string{"-n", "2", "--runtime", "v8", "./pi"}, err: "want wazero or wasmtime"},
		{name: "join a bad URL", args: []string{"join", "h:1", "--job", "j", "--token", "t", "./pi"}, err: "want ws://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseArgs(tc.args)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if len(cfg.args) == 0 {
				cfg.args = nil // no arguments, however spelt
			}
			want := tc.want
			want.memCheck = !tc.noMemCheck // on unless the case says otherwise
			require.Equal(t, want, cfg)
		})
	}
}

func TestResolveTarget(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("package main\n"), mode))
		return p
	}
	write("prog/main.go", 0o644)
	single := write("one.go", 0o644)
	exe := write("bin/tool", 0o755)
	plain := write("bin/data.txt", 0o644)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "empty"), 0o755))
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)

	failrank, err := filepath.Abs("testdata/failrank")
	require.NoError(t, err)
	here, err := os.Getwd()
	require.NoError(t, err)
	pi, err := filepath.Abs("../../examples/pi")
	require.NoError(t, err)

	// A package builds in its own directory, so that its module's go.mod
	// applies whatever meshrun's working directory.
	for _, tc := range []struct {
		arg  string
		want target
		err  string
	}{
		{arg: "./testdata/failrank", want: target{pkg: ".", dir: failrank, name: "failrank"}},
		{arg: "testdata/failrank", want: target{pkg: ".", dir: failrank, name: "failrank"}},
		{arg: "testdata/failrank/", want: target{pkg: ".", dir: failrank, name: "failrank"}},
		{arg: ".", want: target{pkg: ".", dir: here, name: "meshrun"}},
		{arg: "../../examples/pi", want: target{pkg: ".", dir: pi, name: "pi"}},
		{arg: filepath.Join(dir, "prog"), want: target{pkg: ".", dir: filepath.Join(dir, "prog"), name: "prog"}},
		{arg: single, want: target{pkg: "one.go", dir: dir, name: "one"}},
		{arg: exe, want: target{exe: exe}},
		{arg: "sh", want: target{exe: sh}},
		{arg: "github.com/meshmpi/meshmpi/examples/ring", want: target{pkg: "github.com/meshmpi/meshmpi/examples/ring", name: "ring"}},
		{arg: "example.com/tool@v1.2.0", want: target{pkg: "example.com/tool", name: "tool"}},
		{arg: plain, err: "not executable"},
		{arg: filepath.Join(dir, "empty"), err: "without .go files"},
		{arg: "./nope", err: "no such file"},
		{arg: "../nope", err: "no such file"},
		{arg: filepath.Join(dir, "nope"), err: "no such file"},
		{arg: "meshrun-no-such-command", err: "not a file, a directory or a command on PATH"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			got, err := resolveTarget(tc.arg)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
