//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// fsServer gives the page's Go program this process's file system, as
// Node gives it to Go's default go_js_wasm_exec: the page's fs object
// (pageFS) turns each call of Go's syscall package into a POST of
// {op, args} here. Only the page jsrun opened knows the server's URL
// path, which carries a random key.
type fsServer struct {
	cwd   string
	mu    sync.Mutex
	files map[int]*os.File
	next  int
}

func newFSServer() (*fsServer, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return &fsServer{cwd: wd, files: map[int]*os.File{}, next: 100}, nil
}

type fsRequest struct {
	Op    string   `json:"op"`
	Path  string   `json:"path"`
	Path2 string   `json:"path2"`
	FD    int      `json:"fd"`
	Flags int      `json:"flags"`
	Mode  uint32   `json:"mode"`
	N     int64    `json:"n"`   // read length, truncate length
	Pos   *int64   `json:"pos"` // read/write position, nil for the current offset
	Data  []byte   `json:"data"`
	Times [2]int64 `json:"times"` // utimes, seconds
	UID   int      `json:"uid"`
	GID   int      `json:"gid"`
}

type fsStat struct {
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Mode    uint32 `json:"mode"`
	Nlink   uint64 `json:"nlink"`
	UID     uint32 `json:"uid"`
	GID     uint32 `json:"gid"`
	Rdev    uint64 `json:"rdev"`
	Size    int64  `json:"size"`
	Blksize int64  `json:"blksize"`
	Blocks  int64  `json:"blocks"`
	Atime   int64  `json:"atimeMs"`
	Mtime   int64  `json:"mtimeMs"`
	Ctime   int64  `json:"ctimeMs"`
}

type fsError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type fsResponse struct {
	Error  *fsError `json:"error,omitempty"`
	FD     int      `json:"fd,omitempty"`
	N      int      `json:"n,omitempty"`
	Data   []byte   `json:"data,omitempty"`
	Names  []string `json:"names,omitempty"`
	Target string   `json:"target,omitempty"`
	Stat   *fsStat  `json:"stat,omitempty"`
}

func (s *fsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req fsRequest
	var resp fsResponse
	err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req)
	if err == nil {
		err = s.do(&req, &resp)
	}
	if err != nil {
		resp = fsResponse{Error: &fsError{Code: errnoCode(err), Message: err.Error()}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func (s *fsServer) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.cwd, p)
}

func (s *fsServer) file(fd int) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[fd]
	if f == nil {
		return nil, syscall.EBADF
	}
	return f, nil
}

func (s *fsServer) do(q *fsRequest, a *fsResponse) error {
	p, p2 := s.abs(q.Path), s.abs(q.Path2)
	switch q.Op {
	case "open":
		f, err := os.OpenFile(p, q.Flags, os.FileMode(q.Mode&0o777))
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.next++
		a.FD = s.next
		s.files[a.FD] = f
		s.mu.Unlock()
		return nil
	case "close":
		f, err := s.file(q.FD)
		if err != nil {
			return err
		}
		s.mu.Lock()
		delete(s.files, q.FD)
		s.mu.Unlock()
		return f.Close()
	case "read":
		f, err := s.file(q.FD)
		if err != nil {
			return err
		}
		buf := make([]byte, min(q.N, 16<<20))
		var n int
		if q.Pos != nil {
			n, err = f.ReadAt(buf, *q.Pos)
		} else {
			n, err = f.Read(buf)
		}
		if err == io.EOF {
			err = nil
		}
		a.Data, a.N = buf[:n], n
		return err
	case "write":
		f, err := s.file(q.FD)
		if err != nil {
			return err
		}
		if q.Pos != nil {
			a.N, err = f.WriteAt(q.Data, *q.Pos)
		} else {
			a.N, err = f.Write(q.Data)
		}
		return err
	case "fstat", "stat", "lstat":
		var fi os.FileInfo
		var err error
		switch q.Op {
		case "fstat":
			var f *os.File
			if f, err = s.file(q.FD); err == nil {
				fi, err = f.Stat()
			}
		case "stat":
			fi, err = os.Stat(p)
		default:
			fi, err = os.Lstat(p)
		}
		if err != nil {
			return err
		}
		a.Stat = statOf(fi)
		return nil
	case "readdir":
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		a.Names = make([]string, len(ents))
		for i, e := range ents {
			a.Names[i] = e.Name()
		}
		return nil
	case "mkdir":
		return os.Mkdir(p, os.FileMode(q.Mode&0o777))
	case "unlink":
		return syscall.Unlink(p)
	case "rmdir":
		return syscall.Rmdir(p)
	case "rename":
		return os.Rename(p, p2)
	case "truncate":
		return os.Truncate(p, q.N)
	case "ftruncate", "fsync", "fchmod", "fchown":
		f, err := s.file(q.FD)
		if err != nil {
			return err
		}
		switch q.Op {
		case "ftruncate":
			return f.Truncate(q.N)
		case "fsync":
			return f.Sync()
		case "fchmod":
			return f.Chmod(os.FileMode(q.Mode & 0o7777))
		default:
			return f.Chown(q.UID, q.GID)
		}
	case "chmod":
		return os.Chmod(p, os.FileMode(q.Mode&0o7777))
	case "chown":
		return os.Chown(p, q.UID, q.GID)
	case "lchown":
		return os.Lchown(p, q.UID, q.GID)
	case "utimes":
		return os.Chtimes(p, time.Unix(q.Times[0], 0), time.Unix(q.Times[1], 0))
	case "readlink":
		t, err := os.Readlink(p)
		a.Target = t
		return err
	case "symlink":
		return os.Symlink(q.Path, p2) // the target stays as given
	case "link":
		return os.Link(p, p2)
	}
	return syscall.ENOSYS
}

func statOf(fi os.FileInfo) *fsStat {
	st := &fsStat{Size: fi.Size(), Mtime: fi.ModTime().UnixMilli(), Nlink: 1, Blksize: 4096}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Dev, st.Ino, st.Mode, st.Nlink = uint64(sys.Dev), sys.Ino, sys.Mode, uint64(sys.Nlink)
		st.UID, st.GID, st.Rdev = sys.Uid, sys.Gid, uint64(sys.Rdev)
		st.Blksize, st.Blocks = int64(sys.Blksize), sys.Blocks
		st.Atime = sys.Atim.Sec*1000 + sys.Atim.Nsec/1e6
		st.Ctime = sys.Ctim.Sec*1000 + sys.Ctim.Nsec/1e6
	}
	return st
}

// errnoCode is the Node error code Go's syscall package maps back to
// an Errno.
func errnoCode(err error) string {
	var e syscall.Errno
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return "ENOENT"
		case errors.Is(err, os.ErrExist):
			return "EEXIST"
		case errors.Is(err, os.ErrPermission):
			return "EACCES"
		}
		return "EIO"
	}
	if c, ok := errnoCodes[e]; ok {
		return c
	}
	return "EIO"
}

var errnoCodes = map[syscall.Errno]string{
	syscall.ENOENT: "ENOENT", syscall.EEXIST: "EEXIST", syscall.ENOTDIR: "ENOTDIR", syscall.EISDIR: "EISDIR",
	syscall.EACCES: "EACCES", syscall.EPERM: "EPERM", syscall.ENOTEMPTY: "ENOTEMPTY", syscall.EBADF: "EBADF",
	syscall.EINVAL: "EINVAL", syscall.ENOSYS: "ENOSYS", syscall.EXDEV: "EXDEV", syscall.ELOOP: "ELOOP",
	syscall.ENAMETOOLONG: "ENAMETOOLONG", syscall.EROFS: "EROFS", syscall.ENOSPC: "ENOSPC", syscall.EMFILE: "EMFILE",
}
