package images

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
)

// multiarch is the Debian multiarch triplet of each CPU a program may be
// built for: Debian installs shared libraries in /lib/<triplet> and
// /usr/lib/<triplet>, where its dynamic loader looks first.
var multiarch = map[elf.Machine]string{
	elf.EM_X86_64:  "x86_64-linux-gnu",
	elf.EM_AARCH64: "aarch64-linux-gnu",
	elf.EM_386:     "i386-linux-gnu",
	elf.EM_ARM:     "arm-linux-gnueabihf",
}

// sharedObjects is what the dynamic loader maps to run the ELF program at
// hostPath: its interpreter (the loader itself) and every library it
// needs, directly or through other libraries. Each is keyed by the path the
// loader opens in the image and holds the file of this machine to copy
// there. A static program needs none.
//
// Libraries are looked up as the loader does with no ld.so.cache: the
// RUNPATH (or RPATH) of the object that needs them, then the multiarch and
// plain library directories. The image gets each at the first path found,
// so its loader finds the same file there.
func sharedObjects(hostPath string) (map[string]string, error) {
	objects := map[string]string{}
	queue := []string{hostPath}
	for len(queue) > 0 {
		obj := queue[0]
		queue = queue[1:]
		needed, interp, dirs, err := readDynamic(obj)
		if err != nil {
			return nil, err
		}
		if interp != "" {
			if _, err := os.Stat(interp); err != nil {
				return nil, fmt.Errorf("%s: its loader: %w", obj, err)
			}
			objects[interp] = interp
		}
		for _, name := range needed {
			found, err := findLibrary(name, dirs)
			if err != nil {
				return nil, fmt.Errorf("%s needs %s: %w", obj, name, err)
			}
			if _, seen := objects[found]; seen {
				continue
			}
			objects[found] = found
			queue = append(queue, found)
		}
	}
	return objects, nil
}

// readDynamic reads an ELF object's needed libraries, its interpreter (""
// for a library or a static program) and the directories its libraries are
// searched in.
func readDynamic(hostPath string) (needed []string, interp string, dirs []string, err error) {
	f, err := elf.Open(hostPath)
	if err != nil {
		return nil, "", nil, fmt.Errorf("reading %s as an ELF object: %w", hostPath, err)
	}
	defer f.Close()
	triplet, ok := multiarch[f.Machine]
	if !ok {
		return nil, "", nil, fmt.Errorf("%s: no library directories known for machine %s", hostPath, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return nil, "", nil, fmt.Errorf("%s: reading its interpreter: %w", hostPath, err)
		}
		interp = strings.TrimRight(string(b), "\x00")
	}
	needed, err = f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, "", nil, fmt.Errorf("%s: reading its needed libraries: %w", hostPath, err)
	}
	runpath, err := f.DynString(elf.DT_RUNPATH)
	if err == nil && len(runpath) == 0 {
		runpath, err = f.DynString(elf.DT_RPATH)
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("%s: reading its library path: %w", hostPath, err)
	}
	for _, rp := range runpath {
		for _, d := range strings.Split(rp, ":") {
			// $ORIGIN and friends name the host's layout, which the image
			// copies only for the directories below.
			if d != "" && !strings.Contains(d, "$") {
				dirs = append(dirs, d)
			}
		}
	}
	dirs = append(dirs, "/lib/"+triplet, "/usr/lib/"+triplet, "/lib", "/usr/lib")
	return needed, interp, dirs, nil
}

// findLibrary is the first dirs/name that exists.
func findLibrary(name string, dirs []string) (string, error) {
	if strings.Contains(name, "/") {
		// A needed entry with a slash is a path, used as is.
		if _, err := os.Stat(name); err != nil {
			return "", err
		}
		return path.Clean(name), nil
	}
	for _, d := range dirs {
		p := path.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in %s", strings.Join(dirs, ", "))
}
