// Package gobuild runs the go command for a target platform: how
// cmd/meshrun builds a rank program (native or wasip1), cmd/signal the
// browser programs and internal/mixedjob the mixed job's rank program.
// Each one wants the same things of it: GOOS and GOARCH in go's
// environment, a context that stops go, and an error that names the
// command line and carries go's own messages.
package gobuild

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Go is the go command for one target platform. The zero Go is the go on
// PATH, for the host, in the current directory.
type Go struct {
	// Cmd is the go command; "" means "go".
	Cmd string
	// GOOS and GOARCH are the target; "" leaves the environment's.
	GOOS, GOARCH string
	// Dir is the directory go runs in; "" means the current one.
	Dir string
	// Setup, when set, adjusts every command before it starts: cmd/meshrun
	// puts go in a process group of its own and interrupts the group when
	// the context ends, so that the compilers go runs stop too.
	Setup func(*exec.Cmd)
}

// Output runs go with args and returns its standard output with the
// surrounding white space trimmed. Ending ctx stops go. A failure's error
// reads like the command line, "GOOS=js GOARCH=wasm go env GOROOT: exit
// status 1", followed by go's standard error.
func (g Go) Output(ctx context.Context, args ...string) (string, error) {
	return g.run(ctx, strings.Join(args, " "), args)
}

// Build runs go build with flags to build pkg into the file out. A
// failure's error reads "GOOS=wasip1 GOARCH=wasm go build PKG: exit
// status 1", without the flags and the output file, followed by go's
// messages.
func (g Go) Build(ctx context.Context, out, pkg string, flags ...string) error {
	args := append(append([]string{"build"}, flags...), "-o", out, pkg)
	_, err := g.run(ctx, "build "+pkg, args)
	return err
}

// run runs go with args; errors show what as go's arguments.
func (g Go) run(ctx context.Context, what string, args []string) (string, error) {
	name := g.Cmd
	if name == "" {
		name = "go"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = g.Dir
	var env []string
	if g.GOOS != "" {
		env = append(env, "GOOS="+g.GOOS)
	}
	if g.GOARCH != "" {
		env = append(env, "GOARCH="+g.GOARCH)
	}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if g.Setup != nil {
		g.Setup(cmd)
	}
	b, err := cmd.Output()
	if err != nil {
		line := strings.Join(append(env, name, what), " ")
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("%s: %w\n%s", line, err, msg)
		}
		return "", fmt.Errorf("%s: %w", line, err)
	}
	return strings.TrimSpace(string(b)), nil
}
