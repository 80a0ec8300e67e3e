//go:build !js && !wasip1

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/mixedjob"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

// The same-host link (-link samehost): two native rank processes of this
// host, this one the driver (rank 0) and a child meshbench the echo (rank
// 1), in a job of the embedded server; each round measures the pair over
// the link the mesh picks (shared memory) and, in a second job, over
// WebRTC (link=webrtc), and, with -mpich, MPICH's shared-memory figures
// (its run.sh, 2 ranks), and with -wasi two WASI ranks that one host
// process carries (internal/mixedjob, as meshrun runs them: memory links
// between their hosts), so all of them see the same machine load. The
// medians of the rounds are printed, with the ratios the bars
// name: same-host against MPICH, WASI against same-host.

// envSameHostChild carries the child's job (a JSON JobSpec).
const envSameHostChild = "MESHBENCH_SAMEHOST_JOB"

// sameHostChild runs the echo rank if this process is a same-host child;
// it reports whether it was one.
func sameHostChild() bool {
	js := os.Getenv(envSameHostChild)
	if js == "" {
		return false
	}
	var spec meshmpi.JobSpec
	err := json.Unmarshal([]byte(js), &spec)
	if err == nil {
		err = echoRank(spec)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshbench child:", err)
		os.Exit(1)
	}
	return true
}

func echoRank(spec meshmpi.JobSpec) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := meshmpi.Join(ctx, spec)
	if err != nil {
		return err
	}
	if err := ranksuite.Echo(s.World(), 0); err != nil {
		return err
	}
	return s.Finalize()
}

// sameHostRound measures plan once between this process and a child, in
// a fresh job whose link setting is link ("" for the default), and
// returns the figures and the link kind LinkInfo named.
func sameHostRound(jobs *jobServer, link string, plan ranksuite.Plan) ([]ranksuite.Figure, string, error) {
	settings := map[string]string{meshmpi.SettingNetwork: "loopback"}
	if link != "" {
		settings[meshmpi.SettingLink] = link
	}
	job := fmt.Sprintf("samehost-%d", jobs.seq.Add(1))
	toks, err := jobs.srv.SeatTokens(job, 2, settings, time.Hour)
	if err != nil {
		return nil, "", err
	}
	spec := meshmpi.JobSpec{Signal: jobs.srv.URL(), Job: job, Token: toks[1], Rank: 1}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	child := exec.Command(self)
	child.Env = append(os.Environ(), envSameHostChild+"="+string(js))
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		return nil, "", err
	}
	waited := false
	defer func() {
		if !waited {
			_ = child.Process.Kill()
			_ = child.Wait()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := meshmpi.Join(ctx, meshmpi.JobSpec{Signal: spec.Signal, Job: job, Token: toks[0], Rank: 0})
	if err != nil {
		return nil, "", err
	}
	w := s.World()
	figs, err := ranksuite.Measure(w, 1, plan)
	if err == nil {
		err = ranksuite.StopEcho(w, 1)
	}
	li, lerr := w.LinkInfo(1)
	if ferr := s.Finalize(); err == nil {
		err = ferr
	}
	if err == nil {
		err = lerr
	}
	if err == nil {
		err, waited = child.Wait(), true
	}
	return figs, li.Link, err
}

// mpichShm runs MPICH's reference (run.sh 2 mpich shm) and returns its
// pingpong (µs, one way) and bw (MB/s) figures by size.
func mpichShm(script string) (lat, bw map[int]float64, err error) {
	figs, err := runReference(script, "mpich", 2)
	if err != nil {
		return nil, nil, err
	}
	// collbench's pingpong is one way already (its round trip halved);
	// before 2026-11-30 it was halved again here, MPICH's latency shown
	// at half its value
	return figs["pingpong"], figs["bw"], nil
}

// runSameHost is -link samehost.
func runSameHost(out io.Writer, cfg config, mpich string, wasi bool) (err error) {
	jobs, err := startJobServer()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := jobs.close(); cerr != nil && err == nil {
			err = fmt.Errorf("signaling server: %w", cerr)
		}
	}()
	plan := ranksuite.Plan{Iters: cfg.iters, StreamBytes: 64 << 20, Rounds: 1}
	if cfg.mode != "bw" {
		plan.LatSizes = cfg.latSizes
	}
	if cfg.mode != "latency" {
		plan.BWSizes = cfg.bwSizes
	}
	var wl *mixedjob.Launcher // -wasi
	if wasi {
		if wl, err = mixedjob.New(context.Background(), mixedjob.Config{WASI: true}); err != nil {
			return err
		}
		defer wl.Close()
	}
	type series map[string][]float64 // "latency 8" → one figure a round
	paths := []struct{ name, setting string }{{"auto", ""}, {"webrtc", "webrtc"}}
	got := map[string]series{}
	kinds := map[string]string{}
	ref := series{}
	for round := range cfg.rounds {
		for _, p := range paths {
			figs, kind, err := sameHostRound(jobs, p.setting, plan)
			if err != nil {
				return fmt.Errorf("%s link, round %d: %w", p.name, round, err)
			}
			kinds[p.name] = kind
			if got[p.name] == nil {
				got[p.name] = series{}
			}
			for _, f := range figs {
				k := f.Bench + " " + strconv.Itoa(f.Size)
				got[p.name][k] = append(got[p.name][k], f.Value)
			}
		}
		if wl != nil {
			figs, _, err := wl.Pair(context.Background(), mixedjob.WASI, mixedjob.WASI, plan)
			if err != nil {
				return fmt.Errorf("wasi pair, round %d: %w", round, err)
			}
			if got["wasi"] == nil {
				got["wasi"] = series{}
			}
			for _, f := range figs {
				k := f.Bench + " " + strconv.Itoa(f.Size)
				got["wasi"][k] = append(got["wasi"][k], f.Value)
			}
		}
		if mpich != "" {
			lat, bw, err := mpichShm(mpich)
			if err != nil {
				return err
			}
			for s, v := range lat {
				ref["latency "+strconv.Itoa(s)] = append(ref["latency "+strconv.Itoa(s)], v)
			}
			for s, v := range bw {
				ref["bw "+strconv.Itoa(s)] = append(ref["bw "+strconv.Itoa(s)], v)
			}
		}
	}
	fmt.Fprintf(out, "# meshbench same-host: two native rank processes, medians of %d interleaved rounds\n", cfg.rounds)
	fmt.Fprintf(out, "# links: auto picked %q, forced %q; MPICH shm via %s\n", kinds["auto"], kinds["webrtc"], orNone(mpich))
	fmt.Fprintf(out, "%-8s %10s %14s %14s %14s %10s %14s %10s\n", "bench", "size", "same-host", "webrtc", "mpich-shm", "vs-mpich", "wasi-1-proc", "vs-same")
	var keys []string
	for k := range got["auto"] {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ab, as, _ := strings.Cut(a, " ")
		bb, bs, _ := strings.Cut(b, " ")
		if c := strings.Compare(bb, ab); c != 0 { // latency before bw
			return c
		}
		x, _ := strconv.Atoi(as)
		y, _ := strconv.Atoi(bs)
		return x - y
	})
	for _, k := range keys {
		bench, size, _ := strings.Cut(k, " ")
		a, w, m := medianOf(got["auto"][k]), medianOf(got["webrtc"][k]), medianOf(ref[k])
		ratio := "-"
		if m > 0 {
			// the bars: latency as a multiple of MPICH's, bandwidth as a fraction
			ratio = strconv.FormatFloat(a/m, 'f', 2, 64) + "×"
		}
		wv, wr := medianOf(got["wasi"][k]), "-"
		if wv > 0 && a > 0 {
			wr = strconv.FormatFloat(wv/a, 'f', 2, 64) + "×"
		}
		fmt.Fprintf(out, "%-8s %10s %14.2f %14.2f %14s %10s %14s %10s\n", bench, size, a, w, fmtRef(m), ratio, fmtRef(wv), wr)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(not run: -mpich)"
	}
	return s
}

func fmtRef(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
