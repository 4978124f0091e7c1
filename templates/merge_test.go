package templates

import (
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
)

// TestDigestMergeKeepsFightsAndIgnores: digests merged while quiet hours
// hold them keep every fight once (each is told only once, so one dropped
// is never told) and the latest weekly ignore-rule section.
func TestDigestMergeKeepsFightsAndIgnores(t *testing.T) {
	f1 := FightLine{App: "web", Namespace: "argocd", Instance: "main", Resource: drift.Ref{Kind: "Deployment", Name: "web"}, Writers: [2]string{"argocd-controller", "hpa"}}
	f2 := f1
	f2.App = "api"
	ig := []IgnoreLine{{Holder: "Application argocd/web", Key: "spec.ignoreDifferences[0]", Stale: true}}
	var held DigestView
	held.Merge(DigestView{Instance: "main", Fights: []FightLine{f1}, Ignores: ig})
	held.Merge(DigestView{Instance: "main", Fights: []FightLine{f1, f2}})
	if len(held.Fights) != 2 || held.Fights[0].App != "web" || held.Fights[1].App != "api" {
		t.Errorf("fights after merging: %+v, want web then api, once each", held.Fights)
	}
	if len(held.Ignores) != 1 {
		t.Errorf("the weekly ignore-rule section was dropped by a later digest without one: %+v", held.Ignores)
	}
}
