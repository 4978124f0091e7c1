package classifiers

// Registry lists every classifier in the order it is asked; the first that
// claims a case names its cause. The specific causes come before the general
// ones, and unknown, which claims every difference, comes last.
var Registry = []Classifier{
	BroadIgnore,
	NondeterministicRender,
	TrackingClash,
	HPAReplicas,
	ManualChange,
	Normalized,
	WebhookMutation,
	ControllerWrite,
	Unknown,
}
