package drift

import (
	"strings"
	"testing"
)

func oldJudgeOf(s oldSensitivity) judge {
	return judge{
		within: func(r Ref, p Pointer) (Pointer, string, string, bool, bool) {
			m, ok := s.Within(r, p)
			return m.Path, m.Reason, m.What, m.oldEntry != nil && m.oldEntry.oldMode == oldWhole, ok
		},
		check:   s.CheckRef,
		hides:   func(r Ref, p Pointer, tg, lv Object) (string, bool) { return s.Hides(r, p, nil, tg, lv) },
		refuses: s.Refuse,
	}
}

// TestSensitiveDecisionsMatchOldTable puts every generated case to the
// table as Go code and to the table as data, and wants the same answers.
func TestSensitiveDecisionsMatchOldTable(t *testing.T) {
	var oldExtra []oldSensitivePath
	for _, s := range policyExtra {
		sp, err := oldParseSensitivePath(s)
		if err != nil {
			t.Fatal(err)
		}
		oldExtra = append(oldExtra, sp)
	}
	cases := generatedCases(t)
	n := 0
	got := decisionLines(t, cases, newJudge(Sensitivity{}), newJudge(Sensitivity{Extra: newExtra(t)}))
	want := decisionLines(t, cases, oldJudgeOf(oldSensitivity{}), oldJudgeOf(oldSensitivity{Extra: oldExtra}))
	sensitive := 0
	for src, lines := range want {
		for i, w := range lines {
			n++
			if len(w) > 0 && !contains(w, "not within") {
				sensitive++
			}
			if got[src][i] != w {
				t.Errorf("%s case %d:\nold: %s\nnew: %s", src, i, w, got[src][i])
				if t.Failed() && n > 50 {
					t.FailNow()
				}
			}
		}
	}
	t.Logf("%d cases in %d sources, %d judged sensitive", n, len(want), sensitive)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
