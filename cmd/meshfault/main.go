//go:build unix

// Meshfault is the long fault-injection run (package
// internal/faultinject): it kills (SIGKILL) or freezes (SIGSTOP) a random
// rank of a meshrun job at a random moment of a random operation, over
// and over, and prints what became of the survivors.
//
//	go run ./cmd/meshfault [-runs 1000] [-duration 90m] [-parallel 2] [-seed S] [-modes native,wasi,mixed] [-ops classic|ulfm|examples|all] [-rounds 6] [-slowkill 3s] [-v]
//
// -ops picks the workload: classic (the default) runs one operation in a
// loop, without fault tolerance, and every survivor must end with an
// error of its own; ulfm runs -rounds rounds of Revoke, Accept/Connect,
// Agree and Shrink under meshrun --keep-going, and every survivor must
// recover and agree (faultinject.Result.Verdict); examples runs
// examples/resilient or examples/farm under meshrun --keep-going and
// strikes while they compute (a worker of the farm), and the survivors
// must finish with the sequential run's answer
// (faultinject.Result.ExampleVerdict); all draws each run's kind at
// random: 40 % classic, 40 % ulfm, 20 % examples.
//
// It runs from the meshmpi module (it builds meshrun and the workload
// there), stops after -runs runs or -duration, whichever comes first
// (runs under way then finish), and prints a summary: runs, hangs,
// survivors that ended without an error, meshrun's report, and the time
// from fault to last survivor exit (p50, p99, max) by fault and phase.
// Each failed run is printed with its plan and its output, and so is a
// kill whose survivors took longer than -slowkill to end. The exit
// status is 1 if a run hung, a survivor ended without an error (classic),
// or a ulfm or example run broke the fault-tolerant contract.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshmpi/meshmpi/internal/faultinject"
)

func main() {
	runs := flag.Int("runs", 1000, "runs to make")
	duration := flag.Duration("duration", 90*time.Minute, "stop starting runs after this long")
	parallel := flag.Int("parallel", 2, "runs at a time")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "the random plans' seed")
	modeList := flag.String("modes", "native,wasi,mixed", "job kinds, comma-separated")
	hang := flag.Duration("hang", faultinject.DefaultHangLimit, "a run whose survivors still run this long after the fault hung")
	verbose := flag.Bool("v", false, "print every run")
	slowKill := flag.Duration("slowkill", 3*time.Second, "print the output of a kill whose survivors took longer than this to end")
	ops := flag.String("ops", "classic", "workloads: classic (one operation, no fault tolerance), ulfm (Revoke, Accept/Connect, Agree, Shrink under --keep-going), examples (resilient and farm under --keep-going) or all")
	rounds := flag.Int("rounds", 6, "-ops ulfm: rounds of Revoke, Accept/Connect, Agree and Shrink per run")
	flag.Parse()
	var ulfmShare, exampleShare float64 // of the runs
	switch *ops {
	case "classic":
	case "ulfm":
		ulfmShare = 1
	case "examples":
		exampleShare = 1
	case "all":
		ulfmShare, exampleShare = 0.4, 0.2
	default:
		fmt.Fprintf(os.Stderr, "meshfault: -ops %q: want classic, ulfm, examples or all\n", *ops)
		os.Exit(2)
	}
	var modes []faultinject.Mode
	for _, m := range strings.Split(*modeList, ",") {
		switch mode := faultinject.Mode(m); mode {
		case faultinject.Native, faultinject.WASI, faultinject.Mixed:
			modes = append(modes, mode)
		default:
			fmt.Fprintf(os.Stderr, "meshfault: -modes: unknown mode %q\n", m)
			os.Exit(2)
		}
	}
	if *runs < 1 || *parallel < 1 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "meshfault: -runs, -parallel and -rounds want at least 1")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "meshfault-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshfault:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	bin, err := faultinject.Build(ctx, dir)
	if err == nil && exampleShare > 0 {
		err = faultinject.BuildExamples(ctx, dir, &bin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshfault:", err)
		os.Exit(1)
	}
	rn := &faultinject.Runner{Bin: bin, HangLimit: *hang}
	fmt.Printf("meshfault: seed %d, up to %d runs or %v, %d at a time, modes %v, ops %s (ulfm: %d rounds)\n", *seed, *runs, *duration, *parallel, modes, *ops, *rounds)

	rng := rand.New(rand.NewPCG(*seed, 0))
	plans := make(chan faultinject.Plan)
	go func() {
		defer close(plans)
		end := time.After(*duration)
		for range *runs {
			var p faultinject.Plan
			switch x := rng.Float64(); {
			case x < exampleShare:
				p = faultinject.RandomExamplePlan(rng, modes)
			case x < exampleShare+ulfmShare:
				p = faultinject.RandomULFMPlan(rng, modes, *rounds)
			default:
				p = faultinject.RandomPlan(rng, modes)
			}
			select {
			case plans <- p:
			case <-end:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	var mu sync.Mutex
	var sum faultinject.Summary
	start := time.Now()
	var wg sync.WaitGroup
	for range *parallel {
		wg.Go(func() {
			for p := range plans {
				r := rn.Run(ctx, p)
				if ctx.Err() != nil {
					return // interrupted: the run tells nothing
				}
				mu.Lock()
				sum.Add(r)
				n := sum.Runs
				if f := r.Failed(); f != "" {
					fmt.Printf("run %d FAILED: %s: %s\n  report: %q\n  output:\n    %s\n", n, p, f, r.Report, strings.Join(r.Output, "\n    "))
				} else if p.Kind == faultinject.Kill && !p.Example() && r.LastExit > *slowKill { // an example computes on after the fault
					fmt.Printf("run %d SLOW: %s: survivors ended %v after the kill\n  report: %q\n  output:\n    %s\n", n, p, r.LastExit.Round(time.Millisecond), r.Report, strings.Join(r.Output, "\n    "))
				} else if *verbose && p.Example() {
					fmt.Printf("run %d: %s: missed %v, last exit %v, job %v, report %q\n", n, p, r.Missed, r.LastExit.Round(time.Millisecond), r.Job.Round(time.Millisecond), r.Report)
				} else if *verbose {
					fmt.Printf("run %d: %s: struck %s, missed %v, last exit %v, report %q\n", n, p, r.Struck, r.Missed, r.LastExit.Round(time.Millisecond), r.Report)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Printf("meshfault: %v\n", time.Since(start).Round(time.Second))
	sum.WriteTo(os.Stdout)
	if u := sum.ULFM; sum.Hangs > 0 || sum.Silent > 0 || u.Hangs+u.Disagreements+u.Unrecovered+u.Meshrun+u.Errors > 0 || sum.Examples.Failed() > 0 {
		os.Exit(1)
	}
}
