package config

import "go.yaml.in/yaml/v3"

// Fight thresholds where the policy names none.
const (
	DefaultMinFlips                = 3
	DefaultMaxSelfHealSyncsPerHour = 6
)

// Fights is the policy that tells a fight between two writers: a path whose
// value changes hands between them MinFlips times, or an application that
// self-heal synced more than MaxSelfHealSyncsPerHour times in an hour to
// the same revision. Argo CD counts syncs in status.history, which keeps 10
// entries unless the Application's revisionHistoryLimit says otherwise: a
// threshold at or above it is never exceeded.
type Fights struct {
	MinFlips                int // 0: not set here (DefaultMinFlips)
	MaxSelfHealSyncsPerHour int // 0: not set here (DefaultMaxSelfHealSyncsPerHour)
}

// Flips is the number of changes of writer that make a fight.
func (f Fights) Flips() int {
	if f.MinFlips == 0 {
		return DefaultMinFlips
	}
	return f.MinFlips
}

// SyncsPerHour is the number of self-heal syncs an hour above which an
// application is in a fight.
func (f Fights) SyncsPerHour() int {
	if f.MaxSelfHealSyncsPerHour == 0 {
		return DefaultMaxSelfHealSyncsPerHour
	}
	return f.MaxSelfHealSyncsPerHour
}

func (f *Fights) merge(o Fights) {
	if o.MinFlips != 0 {
		f.MinFlips = o.MinFlips
	}
	if o.MaxSelfHealSyncsPerHour != 0 {
		f.MaxSelfHealSyncsPerHour = o.MaxSelfHealSyncsPerHour
	}
}

func (p *parser) fights(key string, n *yaml.Node) Fights {
	var f Fights
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"minFlips": func(k string, v *yaml.Node) {
			if f.MinFlips = p.positive(k, v); f.MinFlips == 1 {
				p.fail(k, v.Line, "must be at least 2: one change of writer is a change, not a fight (default 3)")
			}
		},
		"maxSelfHealSyncsPerHour": func(k string, v *yaml.Node) {
			f.MaxSelfHealSyncsPerHour = p.positive(k, v)
		},
	})
	return f
}
