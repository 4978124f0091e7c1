//go:build !unix

package bot

import "time"

// processCPU is not measured here (cpu-s/cycle reads 0).
func processCPU() time.Duration { return 0 }
