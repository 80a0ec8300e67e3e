package op

// unrolledLoops says whether Sum, Prod, Max and Min take unroll elements a
// loop trip: not in a browser build, where the unrolled bodies cost 7.5 KB
// of a rank's gzipped module (examples/resilient, 2026-11-30) against its
// download budget (TestBrowserBuildSize); the plain loop does all there.
const unrolledLoops = false
