package testbed

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// process is one control-plane component running as a child process, its
// output kept in a log file.
type process struct {
	name    string
	bin     string
	args    []string
	logPath string
	// netns, if set, names the network namespace the process runs in
	// (entered with nsenter, which keeps the host's mounts and cgroups
	// visible, unlike `ip netns exec`).
	netns string
	// cgroup, if set, is the cgroup the process is moved to once started,
	// so that what it forks (containerd's shims) can be found and killed.
	cgroup string

	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done is closed
}

// spawnRequests feeds the goroutine that starts every child process.
//
// Children get PR_SET_PDEATHSIG so that a crashed or killed parent leaves
// nothing running. Linux delivers that signal when the parent *thread* exits,
// and the Go runtime may retire threads, so all children are started from one
// goroutine locked to its thread for the life of the process.
var spawnRequests = sync.OnceValue(func() chan spawnRequest {
	ch := make(chan spawnRequest)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread must outlive every child
		for req := range ch {
			req.result <- req.cmd.Start()
		}
	}()
	return ch
})

type spawnRequest struct {
	cmd    *exec.Cmd
	result chan error
}

// start launches the process, appending its output to logPath.
func (p *process) start() error {
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	if p.netns != "" {
		cmd = exec.Command("nsenter", append([]string{"--net=" + netns.Path(p.netns), "--", p.bin}, p.args...)...)
		// containerd finds runc and its shim, kube-proxy nft, on PATH.
		cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Pdeathsig: syscall.SIGKILL,
		Setpgid:   true, // a Ctrl-C in the user's terminal is ours to handle, not theirs
	}
	req := spawnRequest{cmd: cmd, result: make(chan error, 1)}
	spawnRequests() <- req
	if err := <-req.result; err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s (%s): %w", p.name, p.bin, err)
	}
	p.cmd = cmd
	if p.cgroup != "" {
		if err := addToCgroup(p.cgroup, cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			logFile.Close()
			return fmt.Errorf("starting %s: %w", p.name, err)
		}
	}
	p.done = make(chan struct{})
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return nil
}

// pid is the process id, or 0 if it never started.
func (p *process) pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *process) running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the exit.
// It signals only the process it started, by PID.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// exitError describes how the process ended, with the tail of its log.
func (p *process) exitError() error {
	msg := fmt.Sprintf("%s exited", p.name)
	if p.err != nil {
		msg += ": " + p.err.Error()
	}
	logTail := proc.TailFile(p.logPath, 15)
	// A crash's headline sits well above the tail of its trace.
	if hint := diagnose(proc.TailFile(p.logPath, 400)); hint != "" {
		msg += "\n" + hint
	}
	return errors.New(msg + "\n--- last lines of " + p.logPath + " ---\n" + logTail)
}

// portTakenHint explains a component that could not bind its port; Start
// tries again when it sees it.
const portTakenHint = "a port it needs is already in use by another program"

// kwokRaceHint explains kwok v0.8.0 dying at start in its CEL setup, which
// its node and pod controllers and its metrics server run at once on
// shared state (seen in CI: traces through pkg/utils/cel's NewEnvironment
// from lifecycle.Stage.init, or from the server's InstallMetrics); Start
// tries again when it sees it.
const kwokRaceHint = "kwok crashed in the data race of its CEL setup at start"

// diagnose turns well-known failure lines into advice.
func diagnose(log string) string {
	switch {
	case strings.Contains(log, "address already in use"):
		return portTakenHint
	case strings.Contains(log, "sigs.k8s.io/kwok") && slices.ContainsFunc([]string{
		"pkg/utils/cel/environment.go", "(*Server).initCEL", "(*Server).InstallMetrics", "fatal error: concurrent map",
	}, func(sign string) bool { return strings.Contains(log, sign) }):
		return kwokRaceHint
	case strings.Contains(log, "permission denied"):
		return "it lacks a permission it needs (see the log below)"
	}
	return ""
}
