package testbed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// The real nodes leave things outside any directory a test owns: network
// namespaces, cgroups, mounts, processes that outlive their parent (the
// container shims). Each owner records what it made under hostStateDir and
// holds a flock on the record for as long as it lives. The kernel drops the
// lock when the owner dies, however it dies, so the next start can tell a
// record whose owner is gone (the lock is free) from one in use, and sweep it.
const hostStateDir = "/run/liqo-testbed"

// lockedFile is a file held with an exclusive flock.
type lockedFile struct{ f *os.File }

// tryLock opens (creating) path and takes an exclusive flock without
// waiting; ok is false if another live process holds it.
func tryLock(path string) (lf *lockedFile, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
	return &lockedFile{f: f}, true, nil
}

// lock opens (creating) path and waits for an exclusive flock.
func lock(path string) (*lockedFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &lockedFile{f: f}, nil
}

// write replaces the file's content.
func (l *lockedFile) write(data []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(data, 0)
	return err
}

func (l *lockedFile) read() ([]byte, error) {
	st, err := l.f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	_, err = l.f.ReadAt(buf, 0)
	return buf, err
}

// unlock releases the lock, removing the file first when remove is set (a
// record whose resources are gone).
func (l *lockedFile) unlock(remove bool) {
	if remove {
		_ = os.Remove(l.f.Name())
	}
	l.f.Close()
}

// withHostLock serializes the creation and removal of shared host state
// (underlays, the root namespace's routes) across every testbed process.
func withHostLock(fn func() error) error {
	l, err := lock(filepath.Join(hostStateDir, "host.lock"))
	if err != nil {
		return err
	}
	defer l.unlock(false)
	return fn()
}
