//go:build !js && !wasip1

package host

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// CacheKeep is how many compiled modules PruneCache keeps per wazero
// version: a Go module of a few MB compiles to some 20 MB of machine
// code, and every rebuilt program adds one.
const CacheKeep = 8

// PruneCache bounds a compilation cache that Compile used (cacheDir):
// in each of wazero's version directories it keeps the keep entries
// written last and removes the others (entries a run only read are not
// told from unused ones: a module run unchanged for a long time is
// compiled again once keep others were). wazero never removes an entry,
// so without this the cache of a user who edits and reruns a program
// grows by its machine code at every edit. An entry a run still reads
// stays readable (unlinking an open file keeps its contents); an entry
// removed that a later run wants is compiled again.
func PruneCache(cacheDir string, keep int) error {
	dirs, err := os.ReadDir(cacheDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	var errs []error
	for _, d := range dirs {
		if d.IsDir() && strings.HasPrefix(d.Name(), "wazero-") {
			errs = append(errs, pruneDir(filepath.Join(cacheDir, d.Name()), keep))
		}
	}
	return errors.Join(errs...)
}

// pruneDir keeps the keep newest regular files of dir.
func pruneDir(dir string, keep int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type entry struct {
		name string
		mod  time.Time
	}
	var files []entry
	for _, e := range entries {
		if !e.Type().IsRegular() || !isCacheEntry(e.Name()) {
			continue // a run's entry being written (name.*.tmp) is not ours
		}
		if info, err := e.Info(); err == nil {
			files = append(files, entry{e.Name(), info.ModTime()})
		}
	}
	if len(files) <= keep {
		return nil
	}
	slices.SortFunc(files, func(a, b entry) int { return b.mod.Compare(a.mod) })
	var errs []error
	for _, f := range files[max(keep, 0):] {
		if err := os.Remove(filepath.Join(dir, f.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// isCacheEntry reports whether name is a wazero cache entry's: the hex
// of a SHA-256 key.
func isCacheEntry(name string) bool {
	if len(name) != 64 {
		return false
	}
	for _, c := range name {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
