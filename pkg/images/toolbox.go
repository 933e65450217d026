package images

import (
	"fmt"
	"path"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Program is a dynamically linked executable of this machine, such as one a
// Debian package installs, to put into an image.
type Program struct {
	// Path is where the image has it ("/usr/bin/nc"); its base name is the
	// command's name.
	Path string
	// HostFile is the executable on this machine ("/bin/nc.openbsd");
	// symlinks are followed.
	HostFile string
}

// nsswitch makes glibc resolve host names from /etc/hosts, then DNS, as a
// Debian system does; the kubelet mounts both files into every container.
const nsswitch = "passwd: files\ngroup: files\nhosts: files dns\n"

// Toolbox builds the busybox image of Busybox with programs of this machine
// added, each with every shared library it loads and the dynamic loader,
// at the paths the loader opens them at (see sharedObjects): the programs
// then run in the image as on this machine. A program hides the busybox
// applet of its name, so "nc" and "/bin/nc" both run the program.
//
// The shell, /bin/sh, is shellPath (Debian's dash, /bin/dash), not
// busybox's: Debian's static busybox runs its own applet for a command of
// that name before looking at PATH, so "sh -c 'nc ...'" would run
// busybox's nc, which lacks the options of the program (-v, -4). The other
// applets (grep, awk, tr, sleep) are found through PATH as usual.
//
// It is how images that tools expect by name (a socat image, a network
// debugging image) are made here from Debian packages: the packages are
// installed on this machine, and their programs copied.
func Toolbox(busyboxPath, shellPath string, programs ...Program) (v1.Image, error) {
	programs = append([]Program{{Path: "/bin/sh", HostFile: shellPath}}, programs...)
	hidden := map[string]bool{}
	for _, p := range programs {
		hidden[path.Base(p.Path)] = true
	}
	entries, err := busyboxEntries(busyboxPath, hidden)
	if err != nil {
		return nil, err
	}
	entries = append(entries, Entry{Path: "/etc/nsswitch.conf", Data: []byte(nsswitch)})
	libraries := map[string]string{}
	for _, p := range programs {
		host, err := filepath.EvalSymlinks(p.HostFile)
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", p.Path, err)
		}
		entries = append(entries, Entry{Path: p.Path, Mode: 0o755, HostFile: host})
		if path.Dir(path.Clean(p.Path)) != "/bin" {
			entries = append(entries, Entry{Path: "/bin/" + path.Base(p.Path), Link: path.Clean(p.Path)})
		}
		objects, err := sharedObjects(host)
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", p.Path, err)
		}
		for imagePath, hostFile := range objects {
			libraries[imagePath] = hostFile
		}
	}
	for imagePath, hostFile := range libraries {
		// Libraries are executable, as their package installs them: the
		// loader is run directly by the kernel.
		entries = append(entries, Entry{Path: imagePath, Mode: 0o755, HostFile: hostFile})
	}
	return FromEntries(entries, busyboxConfig)
}
