//go:build !linux

package render

import (
	"os"
	"syscall"
)

// osBounded: elsewhere than Linux a render process is bounded only by its
// deadline.
const osBounded = false

func childProcAttr() *syscall.SysProcAttr { return nil }

// killTree kills a render process.
func killTree(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}

// applyLimits does nothing here: memory and CPU are not bounded by the OS.
func applyLimits(Limits) (<-chan os.Signal, error) { return nil, nil }
