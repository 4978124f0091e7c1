// Package argocdtest serves argocd-server's REST API on 127.0.0.1 from
// snapshots, for tests: the routes driftfix calls, with the JSON shapes of
// argocd-server 3.6 (JSON-string resource states, list fields, appNamespace,
// manifests rendered at the revision asked for), bearer-token checks and
// injectable faults.
package argocdtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/driftfix/driftfix/bot/drift"
)

// Server is a running fake argocd-server.
type Server struct {
	*httptest.Server
	Token string

	mu       sync.Mutex
	apps     map[string]*drift.Snapshot // by "namespace/name"
	order    []string
	fail5xx  int
	status   int
	delay    time.Duration
	Settings map[string]any
	// Refreshes counts refresh requests, HardRefreshes the hard ones.
	Refreshes, HardRefreshes int
	// OnRefresh, when set, may change an application when it is refreshed.
	OnRefresh func(*drift.Snapshot)
	// Events are served per application name, as core/v1 Event objects.
	Events map[string][]map[string]any

	// renders holds, per application ("namespace/name"), the manifests a
	// render of a revision yields (key: revisionKey); heads, what its
	// target revisions resolve to now when that is not what Argo CD
	// compared.
	renders map[string]map[string][]drift.Object
	heads   map[string][]string

	// frozen says the served snapshots no longer change (Freeze); items
	// then holds each managed resource's item as encoded once.
	frozen bool
	items  map[stateKey][]byte
	// listed holds, when frozen, each application's list item as encoded
	// once for one ?fields= value; trees its resource tree.
	listed map[listKey][]byte
	asked  []string // the ?fields= values listed holds items for
	trees  map[*drift.Snapshot][]byte
	// streams are the open application watch streams (stream.go).
	streams streams
}

// listKey identifies an application's list item: its Application map and
// the fields asked for.
type listKey struct {
	app    unsafe.Pointer
	fields string
}

// stateKey identifies a resource's four states by the maps that hold them.
type stateKey [4]unsafe.Pointer

func mapPointer(o drift.Object) unsafe.Pointer {
	if o == nil {
		return nil
	}
	return reflect.ValueOf(o).UnsafePointer()
}

// Freeze promises that the served snapshots, their resources and the
// objects in them no longer change (no OnRefresh edits, no writes to the
// maps; an Add may still replace an application with one holding new
// maps): from then on each resource's managed-resources item is encoded
// once, on its first request, and the same bytes are served to every later
// one. The responses are byte for byte those an unfrozen server encodes per
// request; only the emulator's own encoding work is saved (benchmarks).
func (s *Server) Freeze() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frozen = true
	s.items = map[stateKey][]byte{}
	s.listed, s.trees = map[listKey][]byte{}, map[*drift.Snapshot][]byte{}
}

// NewServer starts a fake serving the given applications with token.
func NewServer(token string, snaps ...*drift.Snapshot) *Server {
	s := &Server{Token: token, apps: map[string]*drift.Snapshot{},
		Settings: map[string]any{"appLabelKey": "app.kubernetes.io/instance", "trackingMethod": "annotation"}}
	for _, sn := range snaps {
		s.Add(sn)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Add serves another application (or replaces one with the same name).
func (s *Server) Add(sn *drift.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := drift.Str(sn.Application, "metadata", "namespace") + "/" + sn.AppName()
	old, ok := s.apps[key]
	if !ok {
		s.order = append(s.order, key)
	} else if old != sn {
		// What was encoded of the replaced one is not served again.
		delete(s.trees, old)
		if mapPointer(old.Application) != mapPointer(sn.Application) {
			for _, raw := range s.asked {
				delete(s.listed, listKey{mapPointer(old.Application), raw})
			}
		}
	}
	s.apps[key] = sn
	typ := "MODIFIED"
	if !ok {
		typ = "ADDED"
	}
	s.changed(key, typ, sn.Application)
}

// AddRender makes the manifests endpoint render the application namespace/name
// at revisions (one revision, or one per source of spec.sources) as
// manifests, exactly as given: argocd-server serves its repo-server's
// output, where a namespaced object Git gives no namespace has none. A
// render of the revision the snapshot's status.sync names that was not
// added is its resources' targets.
func (s *Server) AddRender(namespace, name string, revisions []string, manifests ...drift.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := namespace + "/" + name
	if s.renders == nil {
		s.renders = map[string]map[string][]drift.Object{}
	}
	if s.renders[key] == nil {
		s.renders[key] = map[string][]drift.Object{}
	}
	s.renders[key][revisionKey(revisions)] = manifests
}

// SetHead makes the application's target revisions resolve to revisions
// now (a commit pushed after Argo CD compared): the manifests endpoint
// renders them when it is asked for no revision, as argocd-server does.
func (s *Server) SetHead(namespace, name string, revisions ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.heads == nil {
		s.heads = map[string][]string{}
	}
	s.heads[namespace+"/"+name] = revisions
}

func revisionKey(revisions []string) string { return strings.Join(revisions, "\x00") }

// SetToken makes the server accept only token from now on (a rotation).
func (s *Server) SetToken(token string) { s.mu.Lock(); s.Token = token; s.mu.Unlock() }

// Remove stops serving an application (as when RBAC or sharding hides it).
func (s *Server) Remove(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := namespace + "/" + name
	if old, ok := s.apps[key]; ok {
		s.changed(key, "DELETED", old.Application)
	}
	delete(s.apps, key)
	for i, k := range s.order {
		if k == key {
			s.order = append(s.order[:i:i], s.order[i+1:]...)
			break
		}
	}
}

// Fail makes the next n requests answer 503.
func (s *Server) Fail(n int) { s.mu.Lock(); s.fail5xx = n; s.mu.Unlock() }

// Status makes every request answer code (0 to stop).
func (s *Server) Status(code int) { s.mu.Lock(); s.status = code; s.mu.Unlock() }

// Delay makes every request wait d first.
func (s *Server) Delay(d time.Duration) { s.mu.Lock(); s.delay = d; s.mu.Unlock() }

func jsonString(o drift.Object) string {
	if o == nil {
		return "null"
	}
	b, _ := json.Marshal(o)
	return string(b)
}

func writeErr(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": msg, "message": msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	delay, status, token := s.delay, s.status, s.Token
	fail := s.fail5xx > 0
	if fail {
		s.fail5xx--
	}
	s.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if r.Header.Get("Authorization") != "Bearer "+token {
		writeErr(w, http.StatusUnauthorized, "invalid session: token is invalid")
		return
	}
	if status != 0 {
		writeErr(w, status, http.StatusText(status))
		return
	}
	if fail {
		writeErr(w, http.StatusServiceUnavailable, "upstream connect error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	path := strings.TrimPrefix(r.URL.Path, "/api/v1/")
	if path == "settings" {
		json.NewEncoder(w).Encode(s.Settings)
		return
	}
	if path == "applications" {
		s.list(w, r)
		return
	}
	if path == "stream/applications" {
		s.stream(w, r)
		return
	}
	rest, ok := strings.CutPrefix(path, "applications/")
	if !ok {
		writeErr(w, http.StatusNotFound, "no route")
		return
	}
	name, sub, _ := strings.Cut(rest, "/")
	sn := s.find(name, r.URL.Query().Get("appNamespace"))
	if sn == nil {
		writeErr(w, http.StatusNotFound, "application "+name+" not found")
		return
	}
	switch sub {
	case "":
		if kind := r.URL.Query().Get("refresh"); kind != "" {
			s.mu.Lock()
			s.Refreshes++
			if kind == "hard" {
				s.HardRefreshes++
			}
			if s.OnRefresh != nil {
				s.OnRefresh(sn)
			}
			s.mu.Unlock()
		}
		json.NewEncoder(w).Encode(sn.Application)
	case "managed-resources":
		s.mu.Lock()
		frozen := s.frozen
		s.mu.Unlock()
		if frozen {
			s.managedFrozen(w, sn)
			return
		}
		var items []any
		for _, res := range sn.Resources {
			items = append(items, managedItem(res))
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items})
	case "resource-tree":
		s.mu.Lock()
		tree, ok := s.trees[sn]
		s.mu.Unlock()
		if ok {
			w.Write(tree)
			return
		}
		var nodes []any
		for _, res := range sn.Resources {
			if res.Live == nil {
				continue
			}
			ref := res.Ref()
			_, version := drift.SplitAPIVersion(drift.Str(res.Live, "apiVersion"))
			nodes = append(nodes, map[string]any{"group": ref.Group, "version": version, "kind": ref.Kind, "namespace": ref.Namespace, "name": ref.Name,
				"uid": drift.Str(res.Live, "metadata", "uid"), "resourceVersion": drift.Str(res.Live, "metadata", "resourceVersion"),
				"health": map[string]any{"status": "Healthy"}})
		}
		var b bytes.Buffer
		json.NewEncoder(&b).Encode(map[string]any{"nodes": nodes})
		s.mu.Lock()
		if s.frozen {
			s.trees[sn] = bytes.Clone(b.Bytes())
		}
		s.mu.Unlock()
		w.Write(b.Bytes())
	case "events":
		json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{}, "items": s.Events[sn.AppName()]})
	case "manifests":
		s.manifests(w, r, sn)
	default:
		writeErr(w, http.StatusNotFound, "no route")
	}
}

// compared returns the revisions Argo CD compared the application with,
// one per source.
func compared(app drift.Object) []string {
	if len(drift.List(app, "spec", "sources")) == 0 {
		return []string{drift.Str(app, "status", "sync", "revision")}
	}
	var out []string
	for _, v := range drift.List(app, "status", "sync", "revisions") {
		r, _ := v.(string)
		out = append(out, r)
	}
	return out
}

// manifests answers as argocd-server 3.6's GetManifests does: the target
// revision of the one source from ?revision=, of several sources from
// ?revisions= and ?sourcePositions= (1-based, pairwise), the others as
// they resolve now; the answer holds the manifests only (argocd-server
// does not say which revision it rendered). A revision nothing renders
// fails as the repo-server fails to resolve it.
func (s *Server) manifests(w http.ResponseWriter, r *http.Request, sn *drift.Snapshot) {
	q := r.URL.Query()
	key := drift.Str(sn.Application, "metadata", "namespace") + "/" + sn.AppName()
	was := compared(sn.Application)
	s.mu.Lock()
	want := append([]string(nil), was...)
	if h, ok := s.heads[key]; ok {
		want = append([]string(nil), h...)
	}
	rendered, added := s.renders[key]
	s.mu.Unlock()
	if len(drift.List(sn.Application, "spec", "sources")) == 0 {
		if rev := q.Get("revision"); rev != "" {
			want[0] = rev
		}
	} else {
		revs := q["revisions"]
		for i, raw := range q["sourcePositions"] {
			pos, err := strconv.Atoi(raw)
			if err != nil || pos <= 0 || pos > len(want) {
				writeErr(w, http.StatusInternalServerError, "error generating manifests: source position is out of range")
				return
			}
			if i >= len(revs) {
				writeErr(w, http.StatusInternalServerError, "error generating manifests: no revision for source position "+raw)
				return
			}
			want[pos-1] = revs[i]
		}
	}
	var objs []drift.Object
	if m, ok := rendered[revisionKey(want)]; added && ok {
		objs = m
	} else if revisionKey(want) == revisionKey(was) {
		for _, res := range sn.Resources {
			if res.Target != nil {
				objs = append(objs, res.Target)
			}
		}
	} else {
		writeErr(w, http.StatusInternalServerError, "error generating manifests: unable to resolve '"+strings.Join(want, "', '")+"' to a commit SHA")
		return
	}
	ms := []string{}
	for _, o := range objs {
		ms = append(ms, jsonString(o))
	}
	json.NewEncoder(w).Encode(map[string]any{"manifests": ms})
}

// managedItem is a resource as argocd-server's managed-resources lists it.
func managedItem(res drift.Resource) map[string]any {
	ref := res.Ref()
	item := map[string]any{"group": ref.Group, "kind": ref.Kind, "namespace": ref.Namespace, "name": ref.Name,
		"targetState": jsonString(res.Target), "liveState": jsonString(res.Live), "modified": true}
	if res.NormalizedLive != nil {
		item["normalizedLiveState"] = jsonString(res.NormalizedLive)
		item["predictedLiveState"] = jsonString(res.PredictedLive)
	}
	return item
}

// managedFrozen writes what the managed-resources case writes, the same
// bytes, from each item encoded once (see Freeze).
func (s *Server) managedFrozen(w http.ResponseWriter, sn *drift.Snapshot) {
	if len(sn.Resources) == 0 {
		json.NewEncoder(w).Encode(map[string]any{"items": nil})
		return
	}
	// Written as it goes (net/http buffers it), as the encoder's bytes.
	io.WriteString(w, `{"items":[`)
	for i, res := range sn.Resources {
		key := stateKey{mapPointer(res.Target), mapPointer(res.Live), mapPointer(res.NormalizedLive), mapPointer(res.PredictedLive)}
		s.mu.Lock()
		item, ok := s.items[key]
		s.mu.Unlock()
		if !ok {
			item, _ = json.Marshal(managedItem(res))
			s.mu.Lock()
			s.items[key] = item
			s.mu.Unlock()
		}
		if i > 0 {
			io.WriteString(w, ",")
		}
		w.Write(item)
	}
	io.WriteString(w, "]}\n")
}

func (s *Server) find(name, ns string) *drift.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ns != "" {
		return s.apps[ns+"/"+name] // apps are kept by namespace/name
	}
	if sn := s.apps["argocd/"+name]; sn != nil { // argocd-server's own namespace
		return sn
	}
	return s.apps["/"+name]
}

// listFields are the paths argocd-server 3.6 can select in a list call
// (pkg/apiclient/application/forwarder_overwrite.go, appFields); any other
// path in ?fields= is dropped without an error, however deep it is.
var listFields = []string{
	"metadata.name", "metadata.namespace", "metadata.annotations", "metadata.labels",
	"metadata.creationTimestamp", "metadata.deletionTimestamp",
	"spec", "spec.destination", "spec.project", "spec.source", "spec.sources",
	"spec.sourceHydrator", "spec.syncPolicy", "status.sourceHydrator", "status.summary",
	"status.sync.status", "status.sync.revision", "status.health",
	"status.operationState.startedAt", "status.operationState.finishedAt",
	"status.resources", "operation.sync", "status.operationState.phase",
	"status.operationState.operation.sync",
}

// list answers as argocd-server does: with ?fields=items.<path>,... only the
// listed paths argocd-server knows (a selected ancestor covers its
// descendants; status.resources only when not empty); a leading "-"
// excludes them instead.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("fields")
	if !strings.Contains(raw, "items.status.sync.status") {
		writeErr(w, http.StatusBadRequest, "ask for fields")
		return
	}
	exclude := strings.HasPrefix(raw, "-")
	asked := map[string]bool{}
	for _, f := range strings.Split(strings.TrimPrefix(raw, "-"), ",") {
		asked[strings.TrimSpace(f)] = true
	}
	selected := map[string]bool{}
	for _, f := range listFields {
		if asked["items."+f] != exclude {
			selected[f] = true
		}
	}
	var fields []listField
	for _, f := range listFields {
		if !selected[f] {
			continue
		}
		parts := strings.Split(f, ".")
		covered := false
		for i := 1; i < len(parts); i++ {
			covered = covered || selected[strings.Join(parts[:i], ".")]
		}
		if !covered {
			fields = append(fields, listField{f, parts})
		}
	}
	// The list is narrowed as argocd-server narrows it: a label selector,
	// projects (and the older name project) and appNamespace.
	q := r.URL.Query()
	sel, err := labels.Parse(q.Get("selector"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "error parsing the selector: "+err.Error())
		return
	}
	projects := append(q["projects"], q["project"]...)
	appNS := q.Get("appNamespace")
	// Each item is built as it is written, as a server streaming its
	// answer would: the emulator's whole list never sits in the bot's heap.
	s.mu.Lock()
	defer s.mu.Unlock()
	var keep []int
	for i, k := range s.order {
		app := s.apps[k].Application
		ls := map[string]string{}
		for lk, lv := range drift.Map(app, "metadata", "labels") {
			ls[lk], _ = lv.(string)
		}
		if !sel.Matches(labels.Set(ls)) || (len(projects) > 0 && !slices.Contains(projects, drift.Str(app, "spec", "project"))) ||
			(appNS != "" && drift.Str(app, "metadata", "namespace") != appNS) {
			continue
		}
		keep = append(keep, i)
	}
	writeList(w, len(keep), func(i int) ([]byte, error) {
		app := s.apps[s.order[keep[i]]].Application
		key := listKey{mapPointer(app), raw}
		if b, ok := s.listed[key]; ok {
			return b, nil
		}
		b, err := json.Marshal(listItem(app, fields))
		if err == nil && s.frozen {
			if !slices.Contains(s.asked, raw) {
				s.asked = append(s.asked, raw)
			}
			s.listed[key] = b
		}
		return b, err
	})
}

// listItem is what the list serves of app: the fields given.
func listItem(app drift.Object, fields []listField) map[string]any {
	item := map[string]any{}
	for _, f := range fields {
		v, ok := lookup(app, f.parts)
		if !ok || v == nil {
			continue
		}
		if l, isList := v.([]any); isList && len(l) == 0 && f.name == "status.resources" {
			continue
		}
		if f.name == "status.operationState.operation.sync" {
			v = map[string]any{} // served as a presence marker only
		}
		put(item, f.parts, v)
	}
	return item
}

// listField is one path the list serves: its name and its keys.
type listField struct {
	name  string
	parts []string
}

// writeList writes the list of n items, item(i) the i-th encoded, as
// json.NewEncoder(w).Encode of {"metadata": {}, "items": items} does, byte
// for byte, one item at a time:
// the encoder's buffer for a whole fleet's list would otherwise stay in
// encoding/json's pool, in the bot's own heap, for as long as anything in
// the process encodes JSON, which a real Argo CD's answer never does.
func writeList(w io.Writer, n int, item func(i int) ([]byte, error)) {
	bw := bufio.NewWriterSize(w, 256<<10) // large writes, as a server streaming a long list makes them
	bw.WriteString(`{"items":[`)
	for i := 0; i < n; i++ {
		raw, err := item(i)
		if err != nil {
			return // as Encode, which writes nothing of a value it cannot encode
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.Write(raw)
	}
	bw.WriteString("],\"metadata\":{}}\n")
	bw.Flush()
}

// lookup returns the value at path in obj.
func lookup(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// put sets v at path in obj, making the maps on the way.
func put(obj map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = v
}
