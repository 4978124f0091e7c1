//go:build !unix

package audit

import "time"

// processCPU is not measured here: the benchmark reports wall time.
func processCPU() time.Duration { return 0 }
