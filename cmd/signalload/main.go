//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage is a bad command line.
var errUsage = errors.New("usage")

func main() {
	if os.Getenv(envChild) != "" {
		if err := serveChild(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "signalload server:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "signalload:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run runs the mode args name and prints its report to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: signalload idle|churn|form [flags]", errUsage)
	}
	cfg, err := parseFlags(args[0], args[1:], stderr)
	if err != nil {
		return err
	}
	raiseFileLimit()
	var rep fmt.Stringer
	switch cfg.mode {
	case "idle":
		rep, err = runIdle(ctx, cfg, stderr)
	case "churn":
		rep, err = runChurn(ctx, cfg, stderr)
	case "form":
		rep, err = runForm(ctx, cfg, stderr)
	}
	if rep != nil {
		fmt.Fprint(stdout, rep.String())
	}
	return err
}
