package drift

import "fmt"

// Limits bound what a snapshot may hold, so that a hostile or broken file
// fails with an error naming the limit instead of exhausting memory. A zero
// field takes its default (see DefaultLimits); a negative one is no limit.
type Limits struct {
	// MaxBytes is the size of the snapshot file.
	MaxBytes int64
	// MaxResources is the number of entries under resources, and separately
	// under cluster and under each render.
	MaxResources int
	// MaxStringBytes is the length of one string: a field value, a key, or a
	// repository file's content (a manifest or a values file).
	MaxStringBytes int64
}

// DefaultLimits are the limits snapshots are read under. They are well above
// what Kubernetes and Argo CD produce: an object is at most about 1.5 MiB in
// etcd, and the repository reader skips files over 1 MiB.
var DefaultLimits = Limits{
	MaxBytes:       256 << 20,
	MaxResources:   50_000,
	MaxStringBytes: 4 << 20,
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxResources == 0 {
		l.MaxResources = DefaultLimits.MaxResources
	}
	if l.MaxStringBytes == 0 {
		l.MaxStringBytes = DefaultLimits.MaxStringBytes
	}
	return l
}

func overLimit[T int | int64](n, limit T) bool { return limit >= 0 && n > limit }

// limitMsg says which limit a snapshot went over.
func limitMsg(what string, got any, limit string, max any) string {
	return fmt.Sprintf("%s (%v) is over the limit %s (%v)", what, got, limit, max)
}
