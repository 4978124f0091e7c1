// Package audit reads the Kubernetes API server's audit events
// (audit.k8s.io/v1 Event and EventList, Metadata level suffices) from its
// webhook backend (Handler) or from a log file it follows (Follow), and keeps,
// per object and for a bounded window, who wrote it: the authenticated user,
// groups and impersonated user, the user agent and field manager, the verb and
// the time (Store). Request and response bodies and annotations are never
// read into memory beyond the decoder, never stored and never handed on.
//
// A diagnosis gets the writes of its snapshot's objects as one cluster
// object, an audit.k8s.io/v1 EventList (Store.Context); the classifiers
// match a field's managedFields entry to one of them (classifiers/audit.go).
package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unique"

	"github.com/driftfix/driftfix/bot/drift"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// The API version and kinds this package reads.
const (
	APIVersion    = "audit.k8s.io/v1"
	KindEvent     = "Event"
	KindEventList = "EventList"
)

// ignored reads a JSON value and keeps nothing of it: what an event must
// never bring into memory (request and response bodies, annotations that
// admission plugins fill) is skipped by the decoder.
type ignored struct{}

// UnmarshalJSON keeps nothing.
func (*ignored) UnmarshalJSON([]byte) error { return nil }

// wireEvent is the API's Event with the fields driftfix never keeps
// shadowed: encoding/json fills the shallower field, which drops them.
type wireEvent struct {
	auditv1.Event
	RequestObject  ignored `json:"requestObject"`
	ResponseObject ignored `json:"responseObject"`
	Annotations    ignored `json:"annotations"`
}

// wireDoc is either an Event or an EventList: kind says which.
type wireDoc struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Items      []wireEvent `json:"items"`
	wireEvent
}

// Decode reads one JSON document: an audit.k8s.io/v1 Event or EventList, as
// the webhook backend posts and the log backend writes one per line. The
// events come back without request or response bodies and annotations.
func Decode(data []byte) ([]auditv1.Event, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("decode audit events: empty document")
	}
	var doc wireDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decode audit events: not an audit.k8s.io/v1 Event or EventList in JSON: %w", err)
	}
	if doc.APIVersion != APIVersion {
		return nil, fmt.Errorf("decode audit events: apiVersion %q, want %s (the API server's --audit-webhook-version and --audit-log-version default to it)", doc.APIVersion, APIVersion)
	}
	switch doc.Kind {
	case KindEventList:
		out := make([]auditv1.Event, len(doc.Items))
		for i := range doc.Items {
			out[i] = doc.Items[i].Event
		}
		return out, nil
	case KindEvent:
		return []auditv1.Event{doc.Event}, nil
	}
	return nil, fmt.Errorf("decode audit events: kind %q, want %s or %s", doc.Kind, KindEvent, KindEventList)
}

// Key names one object as the API server's request named it.
type Key struct {
	Group, Resource, Namespace, Name string
}

// String renders the key as "resource.group namespace/name".
func (k Key) String() string {
	r := k.Resource
	if k.Group != "" {
		r += "." + k.Group
	}
	if k.Namespace == "" {
		return r + " " + k.Name
	}
	return r + " " + k.Namespace + "/" + k.Name
}

// Identity is an authenticated user as the API server saw it: the name,
// the groups, and nothing else of the user's token or certificate.
type Identity struct {
	User   string
	Groups []string
}

// Record is what the store keeps of one write: never a body, an
// annotation, a source address or a credential's extra attributes.
type Record struct {
	Key         Key
	Subresource string
	Verb        string
	// User is the authenticated identity; Impersonated, when set, is the
	// one it acted as (kubectl --as).
	User         Identity
	Impersonated *Identity
	UserAgent    string
	// FieldManager is the fieldManager the request named, "" when it named
	// none (the API server then takes the user agent's first word).
	FieldManager string
	// Path is the request URI's path (the object's own, or its status or
	// scale); its query is not kept beyond FieldManager.
	Path    string
	AuditID string
	// Received and Completed are when the API server received the request
	// and finished its response.
	Received, Completed time.Time
	Code                int32
}

// objectSubresources are the subresources whose writes change the object
// itself; the others (exec, attach, proxy, portforward, token, eviction,
// binding) carry commands or credentials in their requests, or write
// another object, and are not kept.
var objectSubresources = map[string]bool{"": true, "status": true, "scale": true, "ephemeralcontainers": true, "resize": true, "approval": true, "finalize": true}

// writeVerbs are the verbs that change an object.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// Skip reasons: why an event is not a write the store keeps.
const (
	SkipStage    = "not the ResponseComplete stage"
	SkipVerb     = "not a write"
	SkipSub      = "not a write of the object (a subresource such as exec, proxy or token)"
	SkipObject   = "no object name"
	SkipFailed   = "the request failed"
	SkipDryRun   = "a dry run"
	SkipTooOld   = "older than the retention"
	SkipTooLarge = "larger than a record may be"
)

// maxField bounds each string a record keeps; an event with a longer one
// is refused (no Kubernetes name, user or manager is that long).
const maxField = 1024

// maxGroups bounds the groups a record keeps.
const maxGroups = 64

// RecordOf returns the record of one event, or why the event is not a
// write to keep: only a ResponseComplete stage of a successful write that
// names its object, and no dry run, is one.
func RecordOf(ev *auditv1.Event) (Record, string) {
	if ev.Stage != auditv1.StageResponseComplete {
		return Record{}, SkipStage
	}
	if !writeVerbs[ev.Verb] {
		return Record{}, SkipVerb
	}
	ref := ev.ObjectRef
	if ref == nil || ref.Name == "" || ref.Resource == "" {
		return Record{}, SkipObject
	}
	if !objectSubresources[ref.Subresource] {
		return Record{}, SkipSub
	}
	if ev.ResponseStatus != nil && (ev.ResponseStatus.Code < 200 || ev.ResponseStatus.Code >= 300) {
		return Record{}, SkipFailed
	}
	q := query(ev.RequestURI)
	if len(q["dryRun"]) > 0 {
		return Record{}, SkipDryRun
	}
	path, _, _ := strings.Cut(ev.RequestURI, "?")
	r := Record{
		Key:         Key{Group: intern(ref.APIGroup), Resource: intern(ref.Resource), Namespace: intern(ref.Namespace), Name: intern(ref.Name)},
		Subresource: intern(ref.Subresource), Verb: intern(ev.Verb),
		User:      identity(ev.User.Username, ev.User.Groups),
		UserAgent: intern(ev.UserAgent), FieldManager: intern(q.Get("fieldManager")), Path: path, AuditID: string(ev.AuditID),
		Received: ev.RequestReceivedTimestamp.Time, Completed: ev.StageTimestamp.Time,
	}
	if r.Completed.IsZero() {
		r.Completed = r.Received
	}
	if ev.ImpersonatedUser != nil {
		id := identity(ev.ImpersonatedUser.Username, ev.ImpersonatedUser.Groups)
		r.Impersonated = &id
	}
	if ev.ResponseStatus != nil {
		r.Code = ev.ResponseStatus.Code
	}
	for _, s := range []string{r.Key.Group, r.Key.Resource, r.Key.Namespace, r.Key.Name, r.Subresource, r.User.User, r.UserAgent, r.FieldManager, r.Path, r.AuditID} {
		if len(s) > maxField {
			return Record{}, SkipTooLarge
		}
	}
	if len(r.User.Groups) > maxGroups || (r.Impersonated != nil && (len(r.Impersonated.Groups) > maxGroups || len(r.Impersonated.User) > maxField)) {
		return Record{}, SkipTooLarge
	}
	return r, ""
}

func identity(user string, groups []string) Identity {
	id := Identity{User: intern(user)}
	if len(groups) > 0 {
		id.Groups = make([]string, len(groups))
		for i, g := range groups {
			id.Groups[i] = intern(g)
		}
	}
	return id
}

// query returns the request URI's query; nothing else of the URI is kept
// (a subresource's query may carry a command or a token).
func query(uri string) url.Values {
	_, raw, ok := strings.Cut(uri, "?")
	if !ok {
		return nil
	}
	q, _ := url.ParseQuery(raw)
	return q
}

// Manager is the field manager the request wrote under: the one it named,
// else the API server's default, the user agent's first word.
func (r *Record) Manager() string {
	if r.FieldManager != "" {
		return r.FieldManager
	}
	return drift.ManagerOfUserAgent(r.UserAgent)
}

// size is what a record costs the store, roughly: its strings and a fixed
// overhead for the struct, its slices and the indexes that hold it.
func (r *Record) size() int64 {
	n := int64(256)
	for _, s := range []string{r.Key.Group, r.Key.Resource, r.Key.Namespace, r.Key.Name, r.Subresource, r.Verb, r.User.User, r.UserAgent, r.FieldManager, r.Path, r.AuditID} {
		n += int64(len(s))
	}
	for _, g := range r.User.Groups {
		n += int64(len(g)) + 16
	}
	if r.Impersonated != nil {
		n += 64 + int64(len(r.Impersonated.User))
		for _, g := range r.Impersonated.Groups {
			n += int64(len(g)) + 16
		}
	}
	return n
}

// intern returns the one copy of s the process keeps: users, groups and
// user agents repeat across thousands of records.
func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}
