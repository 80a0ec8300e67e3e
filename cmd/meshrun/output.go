//go:build unix || windows

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// --output-dir DIR (Open MPI's --output-filename): every rank's standard
// output and error also go, as the rank wrote them (no prefix), to
// DIR/rank.N.stdout and DIR/rank.N.stderr. A process whose rank the
// server assigns and meshrun cannot see has DIR/join.I.stdout (I its
// place among meshrun's processes, as in its "[join I] " prefix); a WASI
// rank's files are renamed rank.N.* once its host joined as rank N.

// outputName is the files' base name for a rank label: "rank.2", or
// "join.0" for the label "join 0".
func outputName(label string) string {
	if i, ok := strings.CutPrefix(label, joinLabel); ok {
		return "join." + i
	}
	return "rank." + label
}

// openOutput creates r's output files in --output-dir, if set, and tees
// r's lines into them.
func (j *job) openOutput(r *rank) error {
	dir := j.l.cfg.outputDir
	if dir == "" {
		return nil
	}
	name := outputName(r.label)
	for _, w := range []struct {
		lw  *lineWriter
		ext string
	}{{r.stdout, ".stdout"}, {r.stderr, ".stderr"}} {
		f, err := os.Create(filepath.Join(dir, name+w.ext))
		if err != nil {
			r.closeOutput()
			return fmt.Errorf("--output-dir: %w", err)
		}
		r.files = append(r.files, f)
		w.lw.file = f
		w.lw.fileErr = func(err error) {
			j.l.fail("rank %s: --output-dir: %v (the rest of its output goes to the terminal only)", r.label, err)
		}
	}
	return nil
}

// renameOutput renames r's output files after the rank it turned out to
// have.
func (j *job) renameOutput(r *rank, label string) {
	for _, f := range r.files {
		old := f.Name()
		ext := filepath.Ext(old)
		to := filepath.Join(filepath.Dir(old), outputName(label)+ext)
		if err := os.Rename(old, to); err != nil {
			j.l.log.Warn("renaming an output file", "from", old, "to", to, "err", err)
		}
	}
}

// closeOutput closes r's output files.
func (r *rank) closeOutput() {
	for _, f := range r.files {
		_ = f.Close()
	}
}
