//go:build !unix

package proccpu

import "time"

// Used is not measured here: it is 0, and benchmarks report wall time.
func Used() time.Duration { return 0 }
