package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Limits bound what one application's repository may cost a cycle: the Git
// fetch of its revision and every render a fix is verified with. A zero field
// keeps driftfix's default (sized for a 512Mi pod).
type Limits struct {
	RepoFetchBytes int64         // objects fetched for one commit (default 128Mi)
	RepoBytes      int64         // manifest bytes read from one commit (default 64Mi)
	ChartBytes     int64         // a chart's or kustomization's files together (default 16Mi)
	ValuesBytes    int64         // one values input (default 2Mi)
	RenderedBytes  int64         // what one render may produce (default 32Mi)
	RenderTimeout  time.Duration // one render (default 10s)
}

func (p *parser) limits(key string, n *yaml.Node) Limits {
	var l Limits
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"repoFetchBytes": func(k string, v *yaml.Node) { l.RepoFetchBytes = p.bytes(k, v) },
		"repoBytes":      func(k string, v *yaml.Node) { l.RepoBytes = p.bytes(k, v) },
		"chartBytes":     func(k string, v *yaml.Node) { l.ChartBytes = p.bytes(k, v) },
		"valuesBytes":    func(k string, v *yaml.Node) { l.ValuesBytes = p.bytes(k, v) },
		"renderedBytes":  func(k string, v *yaml.Node) { l.RenderedBytes = p.bytes(k, v) },
		"renderTimeout":  func(k string, v *yaml.Node) { l.RenderTimeout = p.duration(k, v) },
	})
	return l
}

// bytes reads a size: a whole number of bytes or one with a binary suffix
// (Ki, Mi, Gi), greater than zero.
func (p *parser) bytes(key string, n *yaml.Node) int64 {
	v := strings.TrimSpace(n.Value)
	mult := int64(1)
	for suffix, m := range map[string]int64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30} {
		if strings.HasSuffix(v, suffix) {
			v, mult = strings.TrimSuffix(v, suffix), m
			break
		}
	}
	i, err := strconv.ParseInt(v, 10, 64)
	if n.Kind != yaml.ScalarNode || err != nil || i <= 0 || i > (1<<40)/mult {
		p.fail(key, n.Line, fmt.Sprintf("must be a size such as 64Mi, 512Ki or 1048576, not %q", n.Value))
		return 0
	}
	return i * mult
}
