package config

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
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
	// PredictPerPullRequest is the time the renders predicting one pull
	// request's head may take together (default DefaultPredictPerPullRequest).
	PredictPerPullRequest time.Duration
	// PredictPerCycle is the time the predictions of one cycle may take
	// together (default DefaultPredictPerCycle).
	PredictPerCycle time.Duration
}

// DefaultPredictPerPullRequest is limits.predictPerPullRequest's default.
const DefaultPredictPerPullRequest = 2 * time.Minute

// DefaultPredictPerCycle is limits.predictPerCycle's default.
const DefaultPredictPerCycle = 10 * time.Minute

// PredictBudgets are the prediction budgets, defaults in place of zeros:
// per pull request and per cycle.
func (l Limits) PredictBudgets() (perPR, perCycle time.Duration) {
	perPR, perCycle = l.PredictPerPullRequest, l.PredictPerCycle
	if perPR <= 0 {
		perPR = DefaultPredictPerPullRequest
	}
	if perCycle <= 0 {
		perCycle = DefaultPredictPerCycle
	}
	return perPR, perCycle
}

func (p *parser) limits(key string, n *yaml.Node) Limits {
	var l Limits
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"repoFetchBytes":        func(k string, v *yaml.Node) { l.RepoFetchBytes = p.bytes(k, v) },
		"repoBytes":             func(k string, v *yaml.Node) { l.RepoBytes = p.bytes(k, v) },
		"chartBytes":            func(k string, v *yaml.Node) { l.ChartBytes = p.bytes(k, v) },
		"valuesBytes":           func(k string, v *yaml.Node) { l.ValuesBytes = p.bytes(k, v) },
		"renderedBytes":         func(k string, v *yaml.Node) { l.RenderedBytes = p.bytes(k, v) },
		"renderTimeout":         func(k string, v *yaml.Node) { l.RenderTimeout = p.duration(k, v) },
		"predictPerPullRequest": func(k string, v *yaml.Node) { l.PredictPerPullRequest = p.duration(k, v) },
		"predictPerCycle":       func(k string, v *yaml.Node) { l.PredictPerCycle = p.duration(k, v) },
	})
	return l
}

// maxSize is the largest size a limit may name: 1Ti.
const maxSize = 1 << 40

// bytes reads a size as Kubernetes writes one, with apimachinery's quantity
// parser: a whole number of bytes (1048576, 64M, 64Mi, 1.5Gi, 1e6), greater
// than zero and at most 1Ti.
func (p *parser) bytes(key string, n *yaml.Node) int64 {
	q, err := resource.ParseQuantity(strings.TrimSpace(n.Value))
	i := q.Value() // rounded up to a whole number
	whole := q.Cmp(*resource.NewQuantity(i, resource.BinarySI)) == 0
	if n.Kind != yaml.ScalarNode || n.Value == "" || err != nil || !whole || i <= 0 || i > maxSize {
		p.fail(key, n.Line, fmt.Sprintf("must be a whole number of bytes greater than zero and at most 1Ti, written as Kubernetes writes sizes (64Mi, 64M, 1.5Gi, 1048576), not %q", n.Value))
		return 0
	}
	return i
}
