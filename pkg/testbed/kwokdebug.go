package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// kwok answers the kubelet API (/containerLogs, /exec, /portForward) for the
// pods of its nodes, following the ClusterLogs, ClusterExec and
// ClusterPortForward rules of its configuration. The testbed gives every
// simulated pod a log naming its cluster, lets exec run commands on this
// machine with the cluster's name in the environment, and answers port
// forwards with a greeting naming the cluster followed by an echo: enough to
// tell, through any proxy, which cluster really served a request.

// ExecClusterEnv is set to the cluster's name in the environment of every
// command exec'd in a simulated pod. Such commands run on this machine, as
// the user running the testbed: tests should only run harmless ones (echo).
const ExecClusterEnv = "LIQO_TESTBED_CLUSTER"

// PodLogLine is the only line of every simulated container's log (without
// the newline).
func (c *Cluster) PodLogLine() string {
	return fmt.Sprintf("liqo-testbed: log of a container in cluster %s", c.Name)
}

// PortForwardGreeting is the first line (without the newline) a port
// forwarded to any port of a simulated pod writes; after it the connection
// echoes back whatever it receives.
func (c *Cluster) PortForwardGreeting() string {
	return fmt.Sprintf("liqo-testbed: port-forward to a pod in cluster %s", c.Name)
}

// kwokDebugConfig is the path of the kwok configuration holding the rules.
func (c *Cluster) kwokDebugConfig() string { return filepath.Join(c.Dir, "kwok-debug.yaml") }

// writeKwokDebugConfig writes the pods' log file, the exec working
// directory and the configuration pointing kwok at them.
func (c *Cluster) writeKwokDebugConfig() error {
	logFile := filepath.Join(c.Dir, "pod.log")
	execDir := filepath.Join(c.Dir, "exec")
	// kwok reads container logs in the CRI format: time, stream, tag, text.
	line := fmt.Sprintf("%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), c.PodLogLine())
	if err := os.WriteFile(logFile, []byte(line), 0o644); err != nil {
		return fmt.Errorf("writing the simulated pods' log: %w", err)
	}
	if err := os.MkdirAll(execDir, 0o755); err != nil {
		return fmt.Errorf("creating the exec directory: %w", err)
	}
	// The greeting goes in as $0 so that no quoting is needed.
	cfg := fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: liqo-testbed-logs
spec:
  logs:
  - logsFile: %[1]q
    previousLogsFile: %[1]q
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: liqo-testbed-exec
spec:
  execs:
  - local:
      workDir: %[2]q
      envs:
      - name: %[3]s
        value: %[4]q
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata:
  name: liqo-testbed-port-forward
spec:
  forwards:
  - command: ["sh", "-c", "printf '%%s\\n' \"$0\"; exec cat", %[5]q]
`, logFile, execDir, ExecClusterEnv, c.Name, c.PortForwardGreeting())
	if err := os.WriteFile(c.kwokDebugConfig(), []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("writing the kwok debugging configuration: %w", err)
	}
	return nil
}
