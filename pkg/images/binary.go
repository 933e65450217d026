package images

import v1 "github.com/google/go-containerregistry/pkg/v1"

// caBundlePath is where Go's crypto/x509 (and OpenSSL on Debian) look for
// the system's trusted certificates.
const caBundlePath = "/etc/ssl/certs/ca-certificates.crt"

// Binary builds a scratch image holding one static binary, copied from
// hostPath to imagePath (mode 0o755) and run as the entrypoint with args:
// Binary(coredns, "/coredns", "") runs ["/coredns"]. With caBundle set (a
// host PEM file such as /etc/ssl/certs/ca-certificates.crt) the image also
// has it at /etc/ssl/certs/ca-certificates.crt, for a binary that dials TLS
// servers; "" leaves it out.
func Binary(hostPath, imagePath, caBundle string, args ...string) (v1.Image, error) {
	return binaryImage("", hostPath, imagePath, caBundle, args...)
}

// binaryImage is Binary for the architecture arch (GOARCH spelling; this
// machine's if empty), which the binary must be built for.
func binaryImage(arch, hostPath, imagePath, caBundle string, args ...string) (v1.Image, error) {
	entries := []Entry{{Path: imagePath, Mode: 0o755, HostFile: hostPath}}
	if caBundle != "" {
		entries = append(entries, Entry{Path: caBundlePath, Mode: 0o644, HostFile: caBundle})
	}
	return FromEntries(entries, Config{Entrypoint: append([]string{imagePath}, args...), Architecture: arch})
}
