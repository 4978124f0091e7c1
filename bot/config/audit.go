package config

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// Audit bounds what `driftfix run` keeps of the API server's audit events
// (when --audit-token-file or --audit-log-file feeds them): per object,
// who wrote it, for a window. A zero field keeps driftfix's default.
type Audit struct {
	// Retention is how long a write is kept (default 2h).
	Retention time.Duration
	// MaxRecords bounds the writes kept (default 100000).
	MaxRecords int
	// MaxBytes bounds what the kept writes cost, roughly (default 64Mi).
	MaxBytes int64
}

func (p *parser) audit(key string, n *yaml.Node) Audit {
	var a Audit
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"retention":  func(k string, v *yaml.Node) { a.Retention = p.duration(k, v) },
		"maxRecords": func(k string, v *yaml.Node) { a.MaxRecords = p.positive(k, v) },
		"maxBytes":   func(k string, v *yaml.Node) { a.MaxBytes = p.bytes(k, v) },
	})
	return a
}
