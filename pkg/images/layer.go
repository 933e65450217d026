package images

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Entry is one path of a layer. It is a regular file (copied from HostFile,
// or holding Data), a symlink (Link set) or a directory (Dir set); setting
// more than one of HostFile, Data, Link and Dir is an error.
type Entry struct {
	// Path inside the image, absolute ("/bin/sh"); it is cleaned, so "bin/sh"
	// and "/bin//sh" are the same path.
	Path string
	// Mode holds the Unix permission bits as chmod takes them, with the
	// setuid, setgid and sticky bits (0o1777 for /tmp). Zero means 0o644 for
	// a file and 0o755 for a directory; a symlink is always 0o777.
	Mode int64
	// HostFile is the file of this machine the entry's content is read from.
	// Only its bytes are kept: its mode, owner and times are not.
	HostFile string
	// Data is the content of a regular file that has no HostFile.
	Data []byte
	// Link is the target of a symlink, kept as written (relative or absolute).
	Link string
	// Dir makes a directory.
	Dir bool
}

// epoch is every entry's modification time and the image's creation time:
// a digest must not depend on when a file was installed on this machine or
// when the image was built.
var epoch = time.Unix(0, 0).UTC()

// Layer builds a deterministic layer from entries: sorted by path, every
// parent directory present (0o755 unless an entry gives it), owned by root,
// every time the Unix epoch. The same entries (and host file contents)
// always give the same digest.
//
// The tar is held in memory and its compressed form cached after the first
// use, so a layer pushed under several names or to several registries is
// compressed once. The compressed digest also depends on the gzip
// implementation this binary was built with; the uncompressed one (the
// DiffID) only on the entries.
func Layer(entries []Entry) (v1.Layer, error) {
	data, err := tarBytes(entries)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithCompressedCaching, tarball.WithMediaType(types.OCILayer))
}

// tarBytes writes the layer's tar.
func tarBytes(entries []Entry) ([]byte, error) {
	all, err := withParents(entries)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(all))
	for p := range all {
		paths = append(paths, p)
	}
	// A parent sorts before its children: it is a prefix of their paths.
	slices.Sort(paths)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		if err := writeEntry(tw, all[p]); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withParents indexes the entries by their clean path and adds the parent
// directories no entry gives. An entry given for a parent wins, whatever
// its place in the list: /tmp may come after /tmp/x.
func withParents(entries []Entry) (map[string]Entry, error) {
	all := make(map[string]Entry, len(entries))
	for _, e := range entries {
		if err := e.validate(); err != nil {
			return nil, err
		}
		e.Path = path.Clean("/" + e.Path)
		if _, dup := all[e.Path]; dup {
			return nil, fmt.Errorf("layer entry %s given twice", e.Path)
		}
		all[e.Path] = e
	}
	for p := range all {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			parent, given := all[d]
			if !given {
				all[d] = Entry{Path: d, Dir: true}
				continue
			}
			if !parent.Dir {
				return nil, fmt.Errorf("layer entry %s: its parent %s is not a directory", p, d)
			}
		}
	}
	return all, nil
}

func (e Entry) validate() error {
	if path.Clean("/"+e.Path) == "/" {
		return fmt.Errorf("layer entry %q: not a path below /", e.Path)
	}
	kinds := 0
	for _, set := range []bool{e.HostFile != "", e.Data != nil, e.Link != "", e.Dir} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return fmt.Errorf("layer entry %s: more than one of HostFile, Data, Link and Dir", e.Path)
	}
	if e.Mode&^0o7777 != 0 {
		return fmt.Errorf("layer entry %s: mode %o has bits other than permissions, setuid, setgid and sticky", e.Path, e.Mode)
	}
	return nil
}

// writeEntry writes one header and its content. Owner, group and their
// names stay empty (root), times stay the epoch: nothing of this machine
// enters the layer but the bytes of the host files.
func writeEntry(tw *tar.Writer, e Entry) error {
	hdr := &tar.Header{
		Name:    strings.TrimPrefix(e.Path, "/"),
		Mode:    e.Mode,
		ModTime: epoch,
		Format:  tar.FormatPAX,
	}
	var body []byte
	switch {
	case e.Dir:
		hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		if hdr.Mode == 0 {
			hdr.Mode = 0o755
		}
	case e.Link != "":
		hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, e.Link, 0o777
	default:
		hdr.Typeflag, body = tar.TypeReg, e.Data
		if e.HostFile != "" {
			data, err := readRegular(e.HostFile)
			if err != nil {
				return err
			}
			body = data
		}
		if hdr.Mode == 0 {
			hdr.Mode = 0o644
		}
	}
	hdr.Size = int64(len(body))
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := tw.Write(body)
	return err
}

// readRegular reads a host file, refusing a directory or a device: copying
// /dev/zero by mistake must fail, not fill the memory.
func readRegular(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New(name + " is not a regular file")
	}
	return os.ReadFile(name)
}
