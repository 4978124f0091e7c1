package oracle

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"
)

var (
	genCases = flag.Int("oracle-cases", 10000, "how many generated cases TestArgoCDOracleGenerated compares")
	genSeed  = flag.Uint64("oracle-seed", 2026, "the generator's seed")
)

func TestArgoCDOracleGenerated(t *testing.T) {
	type class struct {
		n       int
		example string
	}
	classes := map[string]*class{}
	total, agree := 0, 0
	for n := 0; n < *genCases; n++ {
		c := Generate(*genSeed, n)
		s, err := Prepare(c.Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		c.Snapshot = s
		av, aerr := ArgoCD(c.Snapshot)
		dv, derr := Driftfix(c.Snapshot)
		total++
		var why string
		switch {
		case aerr != nil || derr != nil:
			if (aerr != nil) == (derr != nil) {
				agree++
				continue
			}
			why = fmt.Sprintf("argo error %v / driftfix error %v", aerr, derr)
		case Agree(av[0], dv[0]):
			agree++
			continue
		default:
			why = fmt.Sprintf("argo %v %v / driftfix %v %v", av[0].Modified, av[0].Paths, dv[0].Modified, dv[0].Paths)
		}
		k := c.Class()
		if classes[k] == nil {
			classes[k] = &class{example: fmt.Sprintf("case %d: %s", n, why)}
		}
		classes[k].n++
	}
	var keys []string
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return classes[keys[i]].n > classes[keys[j]].n })
	for _, k := range keys {
		t.Logf("%4d  %s\n      %s", classes[k].n, k, classes[k].example)
	}
	rate := float64(agree) / float64(total)
	t.Logf("generated: %d cases (seed %d), %d agree (%.2f%%)", total, *genSeed, agree, 100*rate)
	if *genCases >= 1000 && rate < generatedFloor {
		t.Errorf("agreement with Argo CD on generated cases fell to %.2f%%, below the floor %.1f%%", 100*rate, 100*generatedFloor)
	}
	_ = strings.Join
}

// generatedFloor is the agreement on generated cases below which the test
// fails: 99.8%, above the 99.5% target (measured 99.87% when it was set; the
// generator is deterministic, so a drop is a change in one of the diffs).
const generatedFloor = 0.998
