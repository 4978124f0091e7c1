package argocd

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/driftfix/driftfix/bot/drift"
)

// listFields keeps the list call small: only what stuck detection reads.
// argocd-server 3.6 answers only the fields of its fixed list
// (pkg/apiclient/application/forwarder_overwrite.go) and silently drops
// any other path, however deep: spec.source is served, spec.source.repoURL
// is not; spec.ignoreDifferences comes only with the whole spec, which
// covers source, sources and syncPolicy as well.
const listFields = "items.metadata.name,items.metadata.namespace,items.spec,items.status.sync.status,items.status.sync.revision," +
	"items.status.operationState.phase,items.status.operationState.startedAt,items.status.operationState.finishedAt,items.status.resources"

// AppSummary is what the list call returns for one application.
type AppSummary struct {
	Name      string
	Namespace string
	Project   string
	RepoURL   string // the (first) source's repository
	// GitRevision is the target revision of an application whose one
	// source is a directory of a Git repository (no chart, no further
	// sources); "" otherwise. Argo CD compared the commit it named then
	// (Revision).
	GitRevision string
	// GitSource says the application has exactly such a source.
	GitSource         bool
	SyncStatus        string
	Revision          string
	OperationPhase    string
	OperationStarted  time.Time
	OperationFinished time.Time
	OutOfSync         int // resources reported OutOfSync
	// SelfHeal says automated sync with self-heal is on: Argo CD writes
	// Git's value back whenever the live state drifts.
	SelfHeal bool
	// CannotCompare says Argo CD cannot compare the application with Git:
	// its sync status is Unknown, or it carries a ComparisonError condition.
	// The list shows only the first; a scan adds the second from the
	// Applications it reads.
	CannotCompare bool
	// IgnoreRules counts the rules of its spec.ignoreDifferences.
	IgnoreRules int
	// ComparisonError is Argo CD's message for an application it cannot
	// compare, from its conditions ("" when none was read). It is
	// cluster-written text: escape it where it lands.
	ComparisonError string
	// Listed is a digest of everything the list said of the application
	// (its spec, sync status and revision, last operation and resources'
	// statuses): two lists that say the same of it give the same digest.
	Listed [16]byte
}

// listItem is one application of the list, as far as driftfix reads it.
type listItem struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		// ResourceVersion is read from the watch stream (the list does
		// not ask for it).
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		Project string `json:"project"`
		Source  *struct {
			RepoURL        string `json:"repoURL"`
			TargetRevision string `json:"targetRevision"`
			Chart          string `json:"chart"`
		} `json:"source"`
		Sources []struct {
			RepoURL string `json:"repoURL"`
		} `json:"sources"`
		SyncPolicy *struct {
			Automated *struct {
				SelfHeal bool `json:"selfHeal"`
			} `json:"automated"`
		} `json:"syncPolicy"`
		IgnoreDifferences []json.RawMessage `json:"ignoreDifferences"`
	} `json:"spec"`
	Status struct {
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
		OperationState *struct {
			Phase      string    `json:"phase"`
			StartedAt  time.Time `json:"startedAt"`
			FinishedAt time.Time `json:"finishedAt"`
		} `json:"operationState"`
		Resources []struct {
			Status string `json:"status"`
		} `json:"resources"`
	} `json:"status"`
}

// listResponse reads the list as it streams in, one application at a time,
// into summaries: a fleet's list is never held whole, neither as its body
// nor as decoded items (a spec may carry large Helm values).
type listResponse struct {
	apps []AppSummary
	// seen keeps each string a fleet's applications share (namespaces,
	// projects, repositories, revisions, statuses) once: the list is kept
	// for the whole cycle.
	seen map[string]string
	// known are the summaries of an earlier list, and index where each is
	// by the digest of its item (built on first need: an item at the same
	// place as before is found there); an item among them is taken as it
	// is, not decoded again.
	known []AppSummary
	index map[[16]byte]int32
}

// once returns s, or the equal string kept already.
func (l *listResponse) once(s string) string {
	if k, ok := l.seen[s]; ok {
		return k
	}
	if l.seen == nil {
		l.seen = map[string]string{}
	}
	l.seen[s] = s
	return s
}

// add keeps one listed application's summary; sum is the digest of its
// item as listed.
func (l *listResponse) add(it *listItem, sum [sha256.Size]byte) {
	s := AppSummary{Listed: [16]byte(sum[:16]), Name: it.Metadata.Name, Namespace: l.once(it.Metadata.Namespace), Project: l.once(it.Spec.Project),
		SyncStatus: l.once(it.Status.Sync.Status), Revision: l.once(it.Status.Sync.Revision), CannotCompare: it.Status.Sync.Status == "Unknown",
		IgnoreRules: len(it.Spec.IgnoreDifferences)}
	if src := it.Spec.Source; src != nil {
		s.RepoURL = l.once(src.RepoURL)
		if src.Chart == "" && len(it.Spec.Sources) == 0 {
			s.GitSource, s.GitRevision = true, l.once(src.TargetRevision)
		}
	} else if len(it.Spec.Sources) > 0 {
		s.RepoURL = l.once(it.Spec.Sources[0].RepoURL)
	}
	if sp := it.Spec.SyncPolicy; sp != nil && sp.Automated != nil {
		s.SelfHeal = sp.Automated.SelfHeal
	}
	if op := it.Status.OperationState; op != nil {
		s.OperationPhase, s.OperationStarted, s.OperationFinished = l.once(op.Phase), op.StartedAt, op.FinishedAt
	}
	for _, r := range it.Status.Resources {
		if r.Status == "OutOfSync" {
			s.OutOfSync++
		}
	}
	l.apps = append(l.apps, s)
}

// ListApplications lists every application the token may see, in one call
// (argocd-server does not paginate), asking only for the fields driftfix reads
// and narrowed by the client's ListFilter.
// The client keeps the list to read the next one against (an item served
// as before is not decoded again), so the slice is shared: callers must
// not modify it, and copy it first to change it.
func (c *Client) ListApplications(ctx context.Context) ([]AppSummary, error) {
	if c.fresh[1] != "" {
		return c.readOne(ctx)
	}
	if apps, ok := c.fromWatch(); ok {
		return apps, nil
	}
	c.mu.Lock()
	resp := listResponse{known: c.listed}
	epoch, live := c.watchListStart()
	c.mu.Unlock()
	q := url.Values{"fields": {listFields}}
	c.filter.addTo(q)
	if err := c.get(ctx, "GET /api/v1/applications", "/api/v1/applications", q, &resp); err != nil {
		return nil, err
	}
	resp.apps = slices.Clip(resp.apps)
	c.mu.Lock()
	c.listed = resp.apps
	c.watchListed(epoch, live)
	c.mu.Unlock()
	return resp.apps, nil
}

func appQuery(ns string) url.Values {
	q := url.Values{}
	if ns != "" {
		q.Set("appNamespace", ns)
	}
	return q
}

func appPath(name, suffix string) string {
	return "/api/v1/applications/" + url.PathEscape(name) + suffix
}

// GetApplication returns the whole Application object.
func (c *Client) GetApplication(ctx context.Context, ns, name string) (map[string]any, error) {
	return c.getApplication(ctx, "GET /api/v1/applications/{name}", ns, name, appQuery(ns))
}

// Refresh asks Argo CD to compare the application again (a normal refresh
// re-reads the cluster; a hard one also re-renders, and is expensive) and
// returns it once the controller has done so.
func (c *Client) Refresh(ctx context.Context, ns, name string, hard bool) (map[string]any, error) {
	q := appQuery(ns)
	kind := "normal"
	if hard {
		kind = "hard"
	}
	q.Set("refresh", kind)
	return c.getApplication(ctx, "GET /api/v1/applications/{name}?refresh="+kind, ns, name, q)
}

func (c *Client) getApplication(ctx context.Context, endpoint, ns, name string, q url.Values) (map[string]any, error) {
	var resp appResponse
	if err := c.get(ctx, endpoint, appPath(name, ""), q, &resp); err != nil {
		return nil, err
	}
	m, ok := resp.v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("argocd: application %s is not an object", name)
	}
	// argocd-server leaves out the type fields; a snapshot needs them.
	if m["apiVersion"] == nil {
		m["apiVersion"] = "argoproj.io/v1alpha1"
	}
	if m["kind"] == nil {
		m["kind"] = "Application"
	}
	return m, nil
}

// ResourceDiff is one compared resource with Argo CD's four states, decoded
// from the JSON strings the API sends ("null" is absent).
type ResourceDiff struct {
	Group, Kind, Namespace, Name string
	Target                       map[string]any
	Live                         map[string]any
	NormalizedLive               map[string]any
	PredictedLive                map[string]any
	Modified                     bool
	Hook                         bool
}

type managedResponse struct {
	Items []managedItem `json:"items"`
}

type managedItem struct {
	Group               string `json:"group"`
	Kind                string `json:"kind"`
	Namespace           string `json:"namespace"`
	Name                string `json:"name"`
	TargetState         string `json:"targetState"`
	LiveState           string `json:"liveState"`
	NormalizedLiveState string `json:"normalizedLiveState"`
	PredictedLiveState  string `json:"predictedLiveState"`
	Modified            bool   `json:"modified"`
	Hook                bool   `json:"hook"`
}

// ManagedResources returns the resources Argo CD compares for the application.
func (c *Client) ManagedResources(ctx context.Context, ns, name string) ([]ResourceDiff, error) {
	var resp managedResponse
	if err := c.get(ctx, "GET /api/v1/applications/{name}/managed-resources", appPath(name, "/managed-resources"), appQuery(ns), &resp); err != nil {
		return nil, err
	}
	out := make([]ResourceDiff, 0, len(resp.Items))
	for _, it := range resp.Items {
		d := ResourceDiff{Group: it.Group, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name, Modified: it.Modified, Hook: it.Hook}
		for _, s := range []struct {
			raw string
			dst *map[string]any
		}{{it.TargetState, &d.Target}, {it.LiveState, &d.Live}, {it.NormalizedLiveState, &d.NormalizedLive}, {it.PredictedLiveState, &d.PredictedLive}} {
			obj, err := decodeState(s.raw)
			if err != nil {
				return nil, fmt.Errorf("argocd: managed resource %s/%s %s: %w", it.Kind, it.Namespace, it.Name, err)
			}
			*s.dst = obj
		}
		out = append(out, d)
	}
	return out, nil
}

// Revision is what Argo CD compared an application with: Revision for an
// application with one source, Revisions (one per entry of spec.sources, in
// order) for one with several. The zero value asks for each source's target
// revision as it resolves now, the branch head.
type Revision struct {
	Revision  string
	Revisions []string
}

// IsZero reports whether r names no revision.
func (r Revision) IsZero() bool { return r.Revision == "" && len(r.Revisions) == 0 }

// String renders the revision, several sources' separated by commas.
func (r Revision) String() string {
	if len(r.Revisions) > 0 {
		return strings.Join(r.Revisions, ",")
	}
	return r.Revision
}

// ComparedRevision returns the revision Argo CD compared the application
// with (status.sync.revision, or status.sync.revisions for several
// sources); ok is false when that is not known: no comparison yet, a
// revision missing for a source, or a source hydrator, whose manifests
// argocd-server renders from the dry source rather than the compared one.
func ComparedRevision(app map[string]any) (Revision, bool) {
	if drift.Map(app, "spec", "sourceHydrator") != nil {
		return Revision{}, false
	}
	if n := len(drift.List(app, "spec", "sources")); n > 0 { // argocd-server's HasMultipleSources
		var revs []string
		for _, v := range drift.List(app, "status", "sync", "revisions") {
			s, _ := v.(string)
			if s == "" {
				return Revision{}, false
			}
			revs = append(revs, s)
		}
		if len(revs) != n {
			return Revision{}, false
		}
		return Revision{Revisions: revs}, true
	}
	rev := drift.Str(app, "status", "sync", "revision")
	return Revision{Revision: rev}, rev != ""
}

// RevisionAt is the revision to ask argocd-server to render an application
// at: commit for each source of the repository ours names, every other
// source at its own target revision.
func RevisionAt(app map[string]any, commit string, ours func(repoURL string) bool) Revision {
	if len(drift.List(app, "spec", "sources")) == 0 {
		return Revision{Revision: commit}
	}
	var at Revision
	for _, src := range drift.Sources(app) {
		if ours(src.RepoURL) {
			at.Revisions = append(at.Revisions, commit)
		} else {
			at.Revisions = append(at.Revisions, src.TargetRevision)
		}
	}
	return at
}

// Manifests renders the application's desired state at a revision (the zero
// Revision: as its target revisions resolve now); noCache forces a fresh
// render (two fresh renders differ when a template is random or time-based).
// argocd-server returns the manifests as its repo-server generated them:
// without the destination namespace Argo CD gives namespaced objects that
// have none when it compares them.
func (c *Client) Manifests(ctx context.Context, ns, name string, at Revision, noCache bool) ([]map[string]any, error) {
	var resp struct {
		Manifests []string `json:"manifests"`
	}
	q := appQuery(ns)
	if noCache {
		q.Set("noCache", "true")
	}
	// argocd-server sets the target revision of the one source from
	// revision, and of source N (counted from 1) from the revisions entry
	// beside sourcePositions N (server/application/application.go,
	// GetManifests).
	if at.Revision != "" {
		q.Set("revision", at.Revision)
	}
	for i, r := range at.Revisions {
		q.Add("revisions", r)
		q.Add("sourcePositions", strconv.Itoa(i+1))
	}
	if err := c.get(ctx, "GET /api/v1/applications/{name}/manifests", appPath(name, "/manifests"), q, &resp); err != nil {
		return nil, err
	}
	var out []map[string]any
	for i, m := range resp.Manifests {
		obj, err := decodeState(m)
		if err != nil {
			return nil, fmt.Errorf("argocd: manifest %d of %s: %w", i, name, err)
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
	return out, nil
}

// Settings are the server settings a diagnosis needs.
type Settings struct {
	TrackingMethod string
	AppLabelKey    string
	// IgnoreDifferences holds the system-level rules by "group/Kind" ("*/*"
	// for all), each the YAML argocd-cm holds.
	IgnoreDifferences map[string]string
}

// Settings reads /api/v1/settings (once per cycle).
func (c *Client) Settings(ctx context.Context) (Settings, error) {
	var resp struct {
		TrackingMethod    string `json:"trackingMethod"`
		AppLabelKey       string `json:"appLabelKey"`
		ResourceOverrides map[string]struct {
			IgnoreDifferences string `json:"ignoreDifferences"`
		} `json:"resourceOverrides"`
	}
	if err := c.get(ctx, "GET /api/v1/settings", "/api/v1/settings", nil, &resp); err != nil {
		return Settings{}, err
	}
	s := Settings{TrackingMethod: resp.TrackingMethod, AppLabelKey: resp.AppLabelKey, IgnoreDifferences: map[string]string{}}
	for gk, o := range resp.ResourceOverrides {
		if strings.TrimSpace(o.IgnoreDifferences) != "" {
			s.IgnoreDifferences[gk] = o.IgnoreDifferences
		}
	}
	return s, nil
}

// decodeState decodes one JSON-string state; "" and "null" are absent.
func decodeState(s string) (map[string]any, error) {
	if s == "" || s == "null" {
		return nil, nil
	}
	v, err := decodeJSON(stringBytes(s))
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("state is not an object")
	}
	return m, nil
}

// decodeJSON decodes with integers as int64 and other numbers as float64, the
// way snapshots are read, so live and offline diagnosis see the same values.
func decodeJSON(b []byte) (any, error) {
	if v, ok := drift.DecodeJSON(b); ok { // the quick reader; what it cannot read, encoding/json does
		return v, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// Node is one resource of the application's resource tree.
type Node struct {
	Group, Version, Kind, Namespace, Name, UID string
	Health                                     string
	Parents                                    []string // "Kind/namespace/name"
	// ResourceVersion is the live object's metadata.resourceVersion as
	// Argo CD's cluster cache last saw it.
	ResourceVersion string
}

// ResourceTree returns the application's live resources with their health
// and owners (argocd-server's resource-tree).
func (c *Client) ResourceTree(ctx context.Context, ns, name string) ([]Node, error) {
	var resp struct {
		Nodes []struct {
			Group           string `json:"group"`
			Version         string `json:"version"`
			Kind            string `json:"kind"`
			Namespace       string `json:"namespace"`
			Name            string `json:"name"`
			UID             string `json:"uid"`
			ResourceVersion string `json:"resourceVersion"`
			ParentRefs      []struct {
				Kind, Namespace, Name string
			} `json:"parentRefs"`
			Health *struct {
				Status string `json:"status"`
			} `json:"health"`
		} `json:"nodes"`
	}
	if err := c.get(ctx, "GET /api/v1/applications/{name}/resource-tree", appPath(name, "/resource-tree"), appQuery(ns), &resp); err != nil {
		return nil, err
	}
	out := make([]Node, 0, len(resp.Nodes))
	for _, n := range resp.Nodes {
		node := Node{Group: n.Group, Version: n.Version, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion}
		if n.Health != nil {
			node.Health = n.Health.Status
		}
		for _, p := range n.ParentRefs {
			node.Parents = append(node.Parents, p.Kind+"/"+p.Namespace+"/"+p.Name)
		}
		out = append(out, node)
	}
	return out, nil
}

// LiveVersions returns the resourceVersion of each live object of the
// application's resource tree by its ref, and a digest of the tree as
// served. When the digest is known's, the tree is exactly as it was when
// known was taken, and it is not decoded again (same is true, versions nil).
func (c *Client) LiveVersions(ctx context.Context, ns, name string, known [32]byte) (versions map[drift.Ref]string, sum [32]byte, same bool, err error) {
	resp := liveVersions{known: known}
	if err := c.get(ctx, "GET /api/v1/applications/{name}/resource-tree", appPath(name, "/resource-tree"), appQuery(ns), &resp); err != nil {
		return nil, sum, false, err
	}
	return resp.versions, resp.sum, resp.same, nil
}

// liveVersions reads a resource tree's live resourceVersions (LiveVersions).
type liveVersions struct {
	known, sum [32]byte
	same       bool
	versions   map[drift.Ref]string
}

func (l *liveVersions) decodeBody(body []byte) error {
	l.sum = sha256.Sum256(body)
	if l.same = l.sum == l.known; l.same {
		return nil
	}
	var tree struct {
		Nodes []struct {
			Group           string `json:"group"`
			Kind            string `json:"kind"`
			Namespace       string `json:"namespace"`
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(body, &tree); err != nil {
		return err
	}
	l.versions = make(map[drift.Ref]string, len(tree.Nodes))
	for _, n := range tree.Nodes {
		l.versions[drift.Ref{Group: n.Group, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name}] = n.ResourceVersion
	}
	return nil
}

// Event is one Kubernetes event about the application.
type Event struct {
	Reason, Message, Type string
	Count                 int
	LastTimestamp         time.Time
}

// Events returns the Application's own events (sync started and completed,
// sync status changes), newest last.
func (c *Client) Events(ctx context.Context, ns, name string) ([]Event, error) {
	var resp struct {
		Items []struct {
			Reason        string    `json:"reason"`
			Message       string    `json:"message"`
			Type          string    `json:"type"`
			Count         int       `json:"count"`
			LastTimestamp time.Time `json:"lastTimestamp"`
		} `json:"items"`
	}
	if err := c.get(ctx, "GET /api/v1/applications/{name}/events", appPath(name, "/events"), appQuery(ns), &resp); err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(resp.Items))
	for _, e := range resp.Items {
		out = append(out, Event{Reason: e.Reason, Message: e.Message, Type: e.Type, Count: e.Count, LastTimestamp: e.LastTimestamp})
	}
	return out, nil
}
