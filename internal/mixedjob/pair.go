//go:build !js && !wasip1

package mixedjob

import (
	"context"
	"errors"
	"fmt"

	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

// Pair measures plan between two ranks of a fresh job: rank 0 of kind
// drive times ranksuite.Measure against rank 1 of kind echo, which
// serves it (ranksuite.Echo). It returns the figures the driver printed
// and both ranks' results.
func (l *Launcher) Pair(ctx context.Context, drive, echo Kind, plan ranksuite.Plan) ([]ranksuite.Figure, []Result, error) {
	res, err := l.Run(ctx, []Rank{
		{Kind: drive, Task: ranksuite.Task{Mode: ranksuite.ModeDrive, Peer: 1, Plan: plan}},
		{Kind: echo, Task: ranksuite.Task{Mode: ranksuite.ModeEcho, Peer: 0}},
	})
	if err != nil {
		return nil, nil, err
	}
	if err := errors.Join(res[0].Err, res[1].Err); err != nil {
		return nil, res, err
	}
	figs, err := ranksuite.ParseFigures(res[0].Stdout)
	if err == nil && len(figs) != len(plan.LatSizes)+len(plan.BWSizes) {
		err = fmt.Errorf("mixedjob: the %s driver printed %d figures, want %d:\n%s", drive, len(figs), len(plan.LatSizes)+len(plan.BWSizes), res[0].Stdout)
	}
	return figs, res, err
}
