//go:build !js

package web

import "errors"

// ErrConfig is wrapped by the errors of a bad Options or JobsConfig.
var ErrConfig = errors.New("web: bad configuration")

// ErrBadJob is wrapped by the errors of a job request the registry
// refuses: a bad size, max, program, ICE line, time limit or argument.
var ErrBadJob = errors.New("bad job")

// ErrTooManyJobs is wrapped when the registry holds its most jobs
// (JobsConfig.MaxJobs) and none of them is over.
var ErrTooManyJobs = errors.New("too many jobs")

// ErrUnknownJob is wrapped for a job id the registry does not hold.
var ErrUnknownJob = errors.New("unknown job")
