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
	// Renders asks for two fresh renders (manifests with noCache) of the
	// revision Argo CD compared, to check that the desired state is
	// deterministic. Each render ends with a RenderInfo object naming that
	// revision.
	Renders bool
	// Settings are the server settings, read once per cycle by the caller.
	Settings *Settings
	// Application is the Application when the caller already has it (from a
	// refresh), which saves a call.
	Application map[string]any
}

// Snapshot collects what a diagnosis of one application needs from
// argocd-server: the Application, Argo CD's four states of every compared
// resource, optionally two fresh renders of the compared revision, and
// argocd-cm's diff settings.
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
		if err := c.addRenders(ctx, ns, name, s); err != nil {
			return nil, err
		}
	}
	if opts.Settings != nil {
		s.Cluster = append(s.Cluster, opts.Settings.ConfigMap())
	}
	return s, nil
}

// RenderInfoAPIVersion and RenderInfoKind name the object Snapshot adds at
// the end of each further render: its field revision (one source) or
// revisions (one per source, in the order of spec.sources) is the revision
// argocd-server rendered. A render without one is taken to be of the
// compared revision, as the snapshot format defines renders.
const (
	RenderInfoAPIVersion = "driftfix.io/v1"
	RenderInfoKind       = "RenderInfo"
)

// addRenders adds two fresh renders of the revision Argo CD compared the
// application with. Without that revision (no comparison yet, a source
// hydrator) it adds none: a render of the branch head says nothing about
// the desired state Argo CD compared.
func (c *Client) addRenders(ctx context.Context, ns, name string, s *drift.Snapshot) error {
	at, ok := ComparedRevision(s.Application)
	if !ok {
		c.log.Info("no further renders: the revision Argo CD compared is not known", "application", name, "namespace", ns)
		return nil
	}
	for i := 0; i < 2; i++ {
		objs, err := c.Manifests(ctx, ns, name, at, true)
		if err != nil {
			return fmt.Errorf("render %s again at revision %s: %w", name, at, err)
		}
		r := make([]drift.Object, 0, len(objs)+1)
		for _, o := range objs {
			r = append(r, o)
		}
		s.Renders = append(s.Renders, append(r, renderInfo(i+1, at)))
	}
	return nil
}

// renderInfo is the object that records which revision render n is of.
func renderInfo(n int, at Revision) drift.Object {
	info := drift.Object{"apiVersion": RenderInfoAPIVersion, "kind": RenderInfoKind,
		"metadata": map[string]any{"name": fmt.Sprintf("render-%d", n),
			"annotations": map[string]any{"driftfix.io/source": "argocd-server /api/v1/applications/{name}/manifests"}}}
	if len(at.Revisions) > 0 {
		revs := make([]any, len(at.Revisions))
		for i, r := range at.Revisions {
			revs[i] = r
		}
		info["revisions"] = revs
	} else {
		info["revision"] = at.Revision
	}
	return info
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
