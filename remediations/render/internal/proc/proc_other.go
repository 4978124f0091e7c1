//go:build !linux

package proc

import (
	"os"
	"syscall"
)

// Bounded is whether a render process's memory and CPU are bounded by the
// operating system here: elsewhere than Linux only its deadline applies.
const Bounded = false

func procAttr() *syscall.SysProcAttr { return nil }

// killTree kills a render process.
func killTree(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}

// applyLimits does nothing here: memory and CPU are not bounded by the OS.
func applyLimits(Bounds) (<-chan os.Signal, error) { return nil, nil }
