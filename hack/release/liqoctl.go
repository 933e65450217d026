package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// versionVar is the variable the build sets to liqoctl's version.
const versionVar = "github.com/liqo-go/liqo/pkg/liqoctl/version.version"

// platform is one system liqoctl is built for.
type platform struct{ os, arch string }

func parsePlatform(s string) (platform, error) {
	goos, goarch, ok := strings.Cut(s, "/")
	if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
		return platform{}, fmt.Errorf("%q is not GOOS/GOARCH", s)
	}
	return platform{goos, goarch}, nil
}

// binary is liqoctl's file name on p.
func (p platform) binary() string {
	if p.os == "windows" {
		return "liqoctl.exe"
	}
	return "liqoctl"
}

// archive is the name of liqoctl's archive for p: a zip on Windows, where
// it is what users open, a tar.gz elsewhere.
func (p platform) archive(version string) string {
	ext := ".tar.gz"
	if p.os == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("liqoctl-%s-%s-%s%s", version, p.os, p.arch, ext)
}

// built is a platform's archive, as written.
type built struct {
	platform platform
	file     string // its name, in the output directory
}

// buildArchives builds liqoctl for each platform and writes its archive
// into dir.
func buildArchives(ctx context.Context, dir, version string, platforms []platform, progress io.Writer) ([]built, error) {
	tmp, err := os.MkdirTemp("", "liqoctl-release-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	var out []built
	for _, p := range platforms {
		bin := filepath.Join(tmp, p.os+"-"+p.arch, p.binary())
		// Static, without the build machine's paths, its version set: the
		// same sources and toolchain give the same binary.
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w -X "+versionVar+"="+version, "-o", bin, "github.com/liqo-go/liqo/cmd/liqoctl")
		cmd.Env = append(os.Environ(), "GOOS="+p.os, "GOARCH="+p.arch, "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building liqoctl for %s/%s: %w\n%s", p.os, p.arch, err, b)
		}
		name := p.archive(version)
		write := tarGz
		if p.os == "windows" {
			write = zipped
		}
		if err := writeArchive(filepath.Join(dir, name), bin, write); err != nil {
			return nil, fmt.Errorf("writing %s: %w", name, err)
		}
		fmt.Fprintln(progress, "wrote", filepath.Join(dir, name))
		out = append(out, built{p, name})
	}
	return out, nil
}

// epoch is the modification time of every archived file, so that an
// archive depends on its contents alone.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// archiver writes into w an archive holding the executable file name.
type archiver func(w io.Writer, name string, data []byte) error

// writeArchive writes the archive path holding bin alone, in the format
// of write.
func writeArchive(path, bin string, write archiver) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := write(f, filepath.Base(bin), data); err != nil {
		return err
	}
	return f.Close()
}

// tarGz is a gzip-compressed tar archive.
func tarGz(w io.Writer, name string, data []byte) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	hdr := &tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// zipped is a zip archive, as Windows users open them.
func zipped(w io.Writer, name string, data []byte) error {
	zw := zip.NewWriter(w)
	hdr := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: epoch}
	hdr.SetMode(0o755)
	fw, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	if _, err := fw.Write(data); err != nil {
		return err
	}
	return zw.Close()
}
