package argocd

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/driftfix/driftfix/bot/drift"
)

// SnapshotOptions choose the optional, costlier parts of a snapshot.
type SnapshotOptions struct {
	// Renders asks for two fresh renders (manifests with noCache) to check
	// that the desired state is deterministic.
	Renders bool
	// Settings are the server settings, read once per cycle by the caller.
	Settings *Settings
	// Application is the Application when the caller already has it (from a
	// refresh), which saves a call.
	Application map[string]any
}

// Snapshot collects what a diagnosis of one application needs from
// argocd-server: the Application, Argo CD's four states of every compared
// resource, optionally two fresh renders, and argocd-cm's diff settings.
func (c *Client) Snapshot(ctx context.Context, ns, name string, opts SnapshotOptions) (*drift.Snapshot, error) {
	app := opts.Application
	if app == nil {
		var err error
		if app, err = c.GetApplication(ctx, ns, name); err != nil {
			return nil, err
		}
	}
	diffs, err := c.ManagedResources(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	s := &drift.Snapshot{Application: app}
	for _, d := range diffs {
		if d.Hook || (d.Target == nil && d.Live == nil) {
			continue
		}
		s.Resources = append(s.Resources, drift.Resource{Target: d.Target, Live: d.Live, NormalizedLive: d.NormalizedLive, PredictedLive: d.PredictedLive})
	}
	if opts.Renders {
		for i := 0; i < 2; i++ {
			objs, _, err := c.Manifests(ctx, ns, name, true)
			if err != nil {
				return nil, fmt.Errorf("render %s again: %w", name, err)
			}
			r := make([]drift.Object, len(objs))
			for j, o := range objs {
				r[j] = o
			}
			s.Renders = append(s.Renders, r)
		}
	}
	if opts.Settings != nil {
		s.Cluster = append(s.Cluster, opts.Settings.ConfigMap())
	}
	return s, nil
}

// ConfigMap renders the settings as the argocd-cm keys the diff reads, so a
// snapshot taken without Kubernetes access still carries them.
func (s Settings) ConfigMap() drift.Object {
	data := map[string]any{}
	if s.TrackingMethod != "" {
		data["application.resourceTrackingMethod"] = s.TrackingMethod
	}
	if s.AppLabelKey != "" {
		data["application.instanceLabelKey"] = s.AppLabelKey
	}
	keys := make([]string, 0, len(s.IgnoreDifferences))
	for gk := range s.IgnoreDifferences {
		keys = append(keys, gk)
	}
	sort.Strings(keys)
	for _, gk := range keys {
		group, kind, found := strings.Cut(gk, "/")
		if !found {
			group, kind = "", gk // core kinds have no group: "ConfigMap"
		}
		key := "resource.customizations.ignoreDifferences."
		switch {
		case group == "*" && kind == "*":
			key += "all"
		case group == "":
			key += kind
		default:
			key += group + "_" + kind
		}
		data[key] = s.IgnoreDifferences[gk]
	}
	return drift.Object{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cm", "annotations": map[string]any{"driftfix.io/source": "argocd-server /api/v1/settings"}},
		"data":     data}
}
