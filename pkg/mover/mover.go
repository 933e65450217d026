// Package mover copies a volume's files between two pods over one TCP
// connection, for liqoctl move volume: the sender streams a tar of its
// directory, the receiver unpacks it, reads back what it wrote and answers
// with the tree's digest, which the sender compares with its own. Either
// side may be the one that listens (the one on a provider does: its
// address, as the consumer sees it, is the one liqoctl knows), and a copy
// that fails or does not match fails both sides, so the caller keeps the
// source.
package mover

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// lostFound is an ext filesystem's own directory, at the root of a fresh
// volume whether or not the source had one: never copied nor compared.
const lostFound = "lost+found"

// Summary is what a side reports of a tree: its digest (SHA-256 over every
// entry's path, type, permissions, size, content and link target, in
// lexical order), its regular files and their bytes.
type Summary struct {
	Digest string
	Files  int
	Bytes  int64
}

func (s Summary) String() string {
	return fmt.Sprintf("sha256=%s files=%d bytes=%d", s.Digest, s.Files, s.Bytes)
}

// Tree is dir's Summary.
func Tree(dir string) (Summary, error) {
	h := sha256.New()
	var s Summary
	err := walkVolume(dir, func(path, rel string, d fs.DirEntry, info fs.FileInfo) error {
		fmt.Fprintf(h, "%s\x00%s\x00%o\x00", filepath.ToSlash(rel), d.Type().String(), info.Mode().Perm())
		switch {
		case d.Type().IsRegular():
			fmt.Fprintf(h, "%d\x00", info.Size())
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			n, err := io.Copy(h, f)
			_ = f.Close()
			if err != nil {
				return err
			}
			s.Files++
			s.Bytes += n
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00", target)
		}
		return nil
	})
	if err != nil {
		return Summary{}, fmt.Errorf("reading %s: %w", dir, err)
	}
	s.Digest = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// Send streams dir to conn as a tar, half-closes the connection and waits
// for the receiver's digest of what it wrote, which must be dir's. progress,
// if set, is called with the bytes sent so far, at most once a second.
func Send(conn net.Conn, dir string, progress func(int64)) (Summary, error) {
	want, err := Tree(dir)
	if err != nil {
		return Summary{}, err
	}
	cw := &countingWriter{w: conn, progress: progress}
	tw := tar.NewWriter(cw)
	if err := writeTree(tw, dir); err != nil {
		return want, fmt.Errorf("sending: %w", err)
	}
	if err := tw.Close(); err != nil {
		return want, fmt.Errorf("sending: %w", err)
	}
	if hc, ok := conn.(interface{ CloseWrite() error }); ok {
		if err := hc.CloseWrite(); err != nil {
			return want, fmt.Errorf("sending: %w", err)
		}
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return want, fmt.Errorf("the receiver gave no answer (the copy did not complete): %w", err)
	}
	got, ok := strings.CutPrefix(strings.TrimSpace(line), "OK ")
	if !ok {
		return want, fmt.Errorf("the receiver failed: %s", strings.TrimSpace(line))
	}
	if got != want.String() {
		return want, fmt.Errorf("the copy does not match: the receiver has %s, the source %s", got, want)
	}
	return want, nil
}

// Receive unpacks the tar conn carries into dir, reads back what it wrote
// and answers the sender with its Summary (or the error).
func Receive(conn net.Conn, dir string) (Summary, error) {
	s, err := receive(conn, dir)
	if err != nil {
		_, _ = fmt.Fprintf(conn, "ERR %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return s, err
	}
	if _, err := fmt.Fprintf(conn, "OK %s\n", s); err != nil {
		return s, fmt.Errorf("answering the sender: %w", err)
	}
	return s, nil
}

func receive(conn net.Conn, dir string) (Summary, error) {
	if err := unpack(conn, dir); err != nil {
		return Summary{}, err
	}
	// Up to the sender's half-close: what follows the archive's end is
	// padding, if anything; the digests say whether the copy is whole.
	if _, err := io.Copy(io.Discard, conn); err != nil {
		return Summary{}, fmt.Errorf("receiving: %w", err)
	}
	return Tree(dir)
}

// unpack writes the tar r carries into dir. Every write goes through an
// os.Root of dir, which resolves each path inside it: an entry naming a
// path outside (`..`, an absolute path) or reaching one through a symbolic
// link (one the archive made, or one the volume held before) fails the
// copy, whatever the sender is. A link's target is kept as it is: the
// volume's own pods resolve it in their own file system.
func unpack(r io.Reader, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("receiving: %w", err)
	}
	defer func() { _ = root.Close() }()
	tr := tar.NewReader(r)
	var dirs []*tar.Header
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("receiving: %w", err)
		}
		name, err := entryName(hdr.Name)
		if err != nil {
			return err
		}
		hdr.Name = name
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o700); err != nil {
				return fmt.Errorf("receiving: %w", err)
			}
			dirs = append(dirs, hdr)
		case tar.TypeReg:
			// A link already there is replaced, not written through.
			if st, err := root.Lstat(name); err == nil && st.Mode()&fs.ModeSymlink != 0 {
				if err := root.Remove(name); err != nil {
					return fmt.Errorf("receiving: %w", err)
				}
			}
			f, err := root.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
			if err != nil {
				return fmt.Errorf("receiving: %w", err)
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("receiving %s: %w", name, err)
			}
			if err := restore(root, name, hdr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			_ = root.Remove(name)
			if err := root.Symlink(hdr.Linkname, name); err != nil {
				return fmt.Errorf("receiving: %w", err)
			}
			_ = root.Lchown(name, hdr.Uid, hdr.Gid)
		default:
			return fmt.Errorf("%s: entries of type %q are not copied", name, hdr.Typeflag)
		}
	}
	// Directories last: writing their files changed their times.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := restore(root, dirs[i].Name, dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

// restore gives name hdr's permissions, owner and modification time.
func restore(root *os.Root, name string, hdr *tar.Header) error {
	if err := root.Chmod(name, fs.FileMode(hdr.Mode).Perm()); err != nil {
		return fmt.Errorf("receiving: %w", err)
	}
	// As root (the mover runs so) this keeps the owners; otherwise it
	// cannot, and the files are the mover's.
	_ = root.Lchown(name, hdr.Uid, hdr.Gid)
	if err := root.Chtimes(name, hdr.ModTime, hdr.ModTime); err != nil {
		return fmt.Errorf("receiving: %w", err)
	}
	return nil
}

// entryName is an archive entry's name as a path inside the volume,
// refusing an absolute one or one that climbs out with "..", so that the
// sender learns why (os.Root would refuse them too).
func entryName(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("receiving: entry %q is not a relative path", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("receiving: entry %q leaves the volume", name)
		}
	}
	return filepath.FromSlash(name), nil
}

// walkVolume calls visit for every entry below dir, in lexical order, with
// its path relative to dir; the volume's lost+found is left out. Tree and
// writeTree both walk this way, so that the digest covers exactly what is
// sent.
func walkVolume(dir string, visit func(path, rel string, d fs.DirEntry, info fs.FileInfo) error) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		if rel == lostFound {
			return fs.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return visit(path, rel, d, info)
	})
}

// writeTree writes dir's entries to tw, in the order Tree reads them.
func writeTree(tw *tar.Writer, dir string) error {
	return walkVolume(dir, func(path, rel string, d fs.DirEntry, info fs.FileInfo) error {
		link := ""
		var err error
		if d.Type()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		} else if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("%s: only files, directories and symbolic links are copied", rel)
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		hdr.Uname, hdr.Gname = "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		_, err = io.Copy(tw, f)
		return err
	})
}

type countingWriter struct {
	w        io.Writer
	n        int64
	last     time.Time
	progress func(int64)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.progress != nil && time.Since(c.last) >= time.Second {
		c.last = time.Now()
		c.progress(c.n)
	}
	return n, err
}
