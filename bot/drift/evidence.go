package drift

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// EvidenceKind says what a piece of evidence rests on. Code that groups or
// judges findings reads the kind and the fields beside it, never the text.
type EvidenceKind string

// The kinds of evidence a classifier records.
const (
	// EvidenceManager is a field manager's write, as managedFields record it
	// (Manager names it): a claim, since any client picks its own name.
	EvidenceManager EvidenceKind = "manager"
	// EvidenceWebhook is a mutating webhook the API server's matchers send
	// the object to (Object is its configuration, Webhook the webhook).
	EvidenceWebhook EvidenceKind = "webhook"
	// EvidenceOwner is an owner recorded on the object or beside it:
	// ownerReferences, a Helm release, an annotation asking a controller to
	// write the field.
	EvidenceOwner EvidenceKind = "owner"
	// EvidenceHPA is a HorizontalPodAutoscaler targeting the workload
	// (Object is the autoscaler).
	EvidenceHPA EvidenceKind = "hpa"
	// EvidenceDryRun is the API server's answer to a server-side dry-run
	// apply of Git's manifest (Proof says what it showed).
	EvidenceDryRun EvidenceKind = "dry-run"
	// EvidenceRender is what renders of the same sources show: a value
	// that differs between renders, or the chart line that writes it.
	EvidenceRender EvidenceKind = "render"
	// EvidenceTracking is how Argo CD tracks the object: its label or
	// annotation, and the Applications that claim it (Object).
	EvidenceTracking EvidenceKind = "tracking"
	// EvidenceGit is what Git declares beside what the live object holds.
	EvidenceGit EvidenceKind = "git"
	// EvidenceAPIServer is what the API server itself does to a value:
	// storing it in canonical form, dropping or pruning it.
	EvidenceAPIServer EvidenceKind = "api-server"
	// EvidenceDefault is a default the API server fills in: of a CRD's
	// schema or of the type.
	EvidenceDefault EvidenceKind = "default"
	// EvidenceAllocation is a value the API server or a controller
	// allocates when the object is created (a node port, a cluster IP).
	EvidenceAllocation EvidenceKind = "allocation"
	// EvidenceBroadRule is what makes an ignore rule broad (Detail).
	EvidenceBroadRule EvidenceKind = "broad-rule"
	// EvidenceSensitiveRule is the security-relevant paths an ignore rule
	// scoped narrowly covers (Detail).
	EvidenceSensitiveRule EvidenceKind = "sensitive-rule"
	// EvidenceHidden is a difference an ignore rule hides from Argo CD
	// (Object and Path), or how many it hides.
	EvidenceHidden EvidenceKind = "hidden"
	// EvidenceAudit is an API server audit event naming the request that
	// wrote the field (classifiers/audit.go): Manager is the field manager
	// it wrote under, Detail the authenticated identity (and whom it
	// impersonated).
	EvidenceAudit EvidenceKind = "audit"
	// EvidenceConsequence says what a sync or a fix does given the rest:
	// reasoning from the evidence, not an observation.
	EvidenceConsequence EvidenceKind = "consequence"
	// EvidenceSearched says what was looked at where nothing explained the
	// difference.
	EvidenceSearched EvidenceKind = "searched"
	// EvidenceReferrer is another object whose field names this one and
	// whose status the writer keeps (Object is the referrer, Path its
	// field): the object graph of the writer catalog.
	EvidenceReferrer EvidenceKind = "referrer"
	// EvidenceDeletion is what deletes an object that is missing without a
	// person: a field of Git's manifest (a TTL), an owner that does not
	// exist, a label a manager prunes by (Path is the field or label).
	EvidenceDeletion EvidenceKind = "deletion"
	// EvidenceAdmission is admission with no webhook object to list, known
	// by the annotation it leaves or that asks for it (Detail).
	EvidenceAdmission EvidenceKind = "admission"
	// EvidenceRuledOut is an explanation looked for and ruled out (Detail
	// names it), where a cause is established by elimination.
	EvidenceRuledOut EvidenceKind = "ruled-out"
	// EvidenceFeatureGate is a feature gate the API server drops a field
	// without (Detail names the gate).
	EvidenceFeatureGate EvidenceKind = "feature-gate"
)

// EvidenceKinds lists every kind above. Records that keep evidence (the
// cycle's memo) write a kind as its place here: a new kind is appended.
var EvidenceKinds = []EvidenceKind{EvidenceManager, EvidenceWebhook, EvidenceOwner, EvidenceHPA, EvidenceDryRun,
	EvidenceRender, EvidenceTracking, EvidenceGit, EvidenceAPIServer, EvidenceDefault, EvidenceAllocation,
	EvidenceBroadRule, EvidenceSensitiveRule, EvidenceHidden, EvidenceAudit, EvidenceConsequence, EvidenceSearched,
	EvidenceReferrer, EvidenceDeletion, EvidenceAdmission, EvidenceRuledOut, EvidenceFeatureGate}

// Proof names what reproduces a piece of evidence, beyond what the
// snapshot records: a question asked of the cluster and its answer.
type Proof string

// The proofs evidence carries.
const (
	// ProofNone: the evidence is what the snapshot records, as read.
	ProofNone Proof = ""
	// ProofDryRunHolds: a server-side dry-run apply of Git's manifest
	// stores the live value too, so a sync cannot change it.
	ProofDryRunHolds Proof = "dry-run-holds-live"
	// ProofDryRunRefutes: a server-side dry-run apply of Git's manifest
	// (dryRun=All under Argo CD's manager, admission webhooks included)
	// stores another value than the live one, Git's as a rule: no webhook
	// wrote the live value at admission of Git's manifest.
	ProofDryRunRefutes Proof = "dry-run-refutes-live"
	// ProofDryRunMissing: the snapshot holds no dry-run answer, so what the
	// API server and its webhooks store for Git's manifest is not known.
	ProofDryRunMissing Proof = "no-dry-run"
)

// Evidence is one fact a finding rests on, with the sentence that says it.
// Text is what people read; the other fields are what code reads.
type Evidence struct {
	Kind EvidenceKind `json:"kind"`
	// Object is the object the evidence is about, when it is another than
	// the finding's resource: the webhook configuration, the autoscaler,
	// the other Application.
	Object *Ref `json:"object,omitempty"`
	// Manager is the field manager the evidence names.
	Manager string `json:"manager,omitempty"`
	// Webhook is the webhook's name within its configuration (Object).
	Webhook string `json:"webhook,omitempty"`
	// Path is the path the evidence is about, when not the finding's own:
	// a security-relevant path an ignore rule covers.
	Path string `json:"path,omitempty"`
	// Proof says what reproduces the evidence.
	Proof Proof `json:"proof,omitempty"`
	// Detail is the part of Text an output shows under its own subject:
	// what makes an ignore rule broad, the sensitive paths it covers.
	Detail string `json:"detail,omitempty"`
	// Text is the sentence, as shown in pull requests, checks and digests.
	Text string `json:"text"`
}

// Say is evidence of a kind with its sentence and no other field.
func Say(kind EvidenceKind, text string) Evidence { return Evidence{Kind: kind, Text: text} }

// EvidenceTexts returns the sentences of evidence, in order, for outputs
// that show text only.
func EvidenceTexts(ev []Evidence) []string {
	if ev == nil {
		return nil
	}
	out := make([]string, len(ev))
	for i, e := range ev {
		out[i] = e.Text
	}
	return out
}

// EvidenceText joins the sentences of evidence with sep.
func EvidenceText(ev []Evidence, sep string) string {
	return strings.Join(EvidenceTexts(ev), sep)
}

// FirstOf returns the first piece of evidence of a kind, and whether there
// is one.
func FirstOf(ev []Evidence, kind EvidenceKind) (Evidence, bool) {
	for _, e := range ev {
		if e.Kind == kind {
			return e, true
		}
	}
	return Evidence{}, false
}

// ManagerOfUserAgent is the field manager the API server records for a
// request that names none: the user agent up to its first slash, without
// unprintable characters, at most 128 bytes.
func ManagerOfUserAgent(ua string) string {
	first, _, _ := strings.Cut(ua, "/")
	var b strings.Builder
	for _, r := range first {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > 128 {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
