package testbed

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// minInotifyInstances is the per-user inotify instance count the real
// nodes need. Each node's kubelet, kube-proxy and containerd take several
// (file and config watches), all as root: Debian's default of 128 runs
// out at about a dozen real nodes, which a few test packages' clusters
// beside a playground reach, and kube-proxy then exits with "too many open
// files".
const minInotifyInstances = 1024

const inotifyInstancesPath = "/proc/sys/fs/inotify/max_user_instances"

var raiseInotifyOnce sync.Once

// raiseInotifyInstances raises the host's fs.inotify.max_user_instances
// to minInotifyInstances if it is lower (never lowers it), once per
// process, saying so; a failure is only reported, the nodes may still fit.
func raiseInotifyInstances() {
	raiseInotifyOnce.Do(func() {
		data, err := os.ReadFile(inotifyInstancesPath)
		if err != nil {
			return
		}
		have, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || have >= minInotifyInstances {
			return
		}
		if err := os.WriteFile(inotifyInstancesPath, []byte(strconv.Itoa(minInotifyInstances)), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "testbed: fs.inotify.max_user_instances is %d, which a dozen real nodes exhaust; raising it failed: %v\n", have, err)
			return
		}
		fmt.Fprintf(os.Stderr, "testbed: raised fs.inotify.max_user_instances from %d to %d for the real nodes' kubelets, kube-proxies and containerds\n",
			have, minInotifyInstances)
	})
}
