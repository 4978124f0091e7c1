// Package proccpu reads the CPU time the process has used, for benchmarks
// that report CPU seconds beside wall time (the fleet, events and audit
// benchmarks).
package proccpu
