package images

import (
	"fmt"
	"os/exec"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// passwd and group give root and nobody names: "id", "ls -l" and a pod's
// runAsUser 65534 then show names, as with the upstream busybox image.
const (
	passwd = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
	group  = "root:x:0:\nnobody:x:65534:\n"
)

// Busybox builds a busybox image from a static busybox binary (Debian's
// busybox-static, /usr/bin/busybox): /bin/busybox and a symlink
// /bin/<applet> → busybox for every applet the binary lists when run with
// --list (sh, wget, nc, nslookup, httpd, sleep, ...), root and nobody in
// /etc/passwd and /etc/group, a world-writable /tmp (1777), and Cmd ["sh"].
//
// The binary is run once to list its applets, so it must be built for this
// machine's architecture, which is the image's.
func Busybox(busyboxPath string) (v1.Image, error) {
	entries, err := busyboxEntries(busyboxPath, nil)
	if err != nil {
		return nil, err
	}
	return FromEntries(entries, busyboxConfig)
}

// busyboxConfig is what a busybox image runs: a shell, with the usual PATH.
var busyboxConfig = Config{
	Cmd: []string{"sh"},
	Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
}

// busyboxEntries are the entries of Busybox, without the applets named in
// hidden.
func busyboxEntries(busyboxPath string, hidden map[string]bool) ([]Entry, error) {
	out, err := exec.Command(busyboxPath, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the applets of %s: %w", busyboxPath, err)
	}
	entries := []Entry{
		{Path: "/bin/busybox", Mode: 0o755, HostFile: busyboxPath},
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		{Path: "/etc/group", Mode: 0o644, Data: []byte(group)},
		{Path: "/tmp", Mode: 0o1777, Dir: true},
		{Path: "/root", Mode: 0o700, Dir: true},
	}
	for _, applet := range strings.Fields(string(out)) {
		// --list prints bare names; a path (from a build whose --list means
		// --list-full) or busybox itself would collide with other entries.
		if applet == "busybox" || strings.Contains(applet, "/") || hidden[applet] {
			continue
		}
		entries = append(entries, Entry{Path: "/bin/" + applet, Link: "busybox"})
	}
	return entries, nil
}
