package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Bounded is whether a render process's memory and CPU are bounded by the
// operating system here (on Linux they are).
const Bounded = true

// procAttr puts a render process in a process group of its own, so it
// is killed with anything it started, and has the kernel kill it if the
// bot's thread that started it goes away.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killTree kills a render process and its process group.
func killTree(p *os.Process) error {
	if p == nil {
		return nil
	}
	err := unix.Kill(-p.Pid, unix.SIGKILL)
	if err == unix.ESRCH {
		return os.ErrProcessDone
	}
	return err
}

// applyLimits bounds this render process: its address space may grow by
// b.Memory over what it holds now (RLIMIT_AS; the Go heap is also told to
// collect before it gets there) and it may use b.CPU more CPU (RLIMIT_CPU,
// whole seconds). The channel receives SIGXCPU when the CPU limit is
// reached; the kernel kills the process a second later.
func applyLimits(b Bounds) (<-chan os.Signal, error) {
	if b.Memory > 0 {
		now, err := addressSpace()
		if err != nil {
			return nil, err
		}
		debug.SetMemoryLimit(b.Memory / 2)
		as := uint64(now + b.Memory)
		if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as}); err != nil {
			return nil, fmt.Errorf("set RLIMIT_AS: %w", err)
		}
	}
	if b.CPU <= 0 {
		return nil, nil
	}
	cpu := make(chan os.Signal, 1)
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return nil, fmt.Errorf("read CPU used: %w", err)
	}
	used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	secs := uint64(math.Ceil((used + b.CPU).Seconds()))
	signal.Notify(cpu, unix.SIGXCPU)
	if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: secs, Max: secs + 1}); err != nil {
		return nil, fmt.Errorf("set RLIMIT_CPU: %w", err)
	}
	return cpu, nil
}

// addressSpace is this process's virtual memory size (VmSize).
func addressSpace() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read the process's size: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := bytes.Fields(sc.Bytes()); len(f) >= 2 && string(f[0]) == "VmSize:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read the process's size: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("read the process's size: no VmSize in /proc/self/status")
}
