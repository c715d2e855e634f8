// Package admission is the plan of what Helm sends for an install or an
// upgrade, and how the API server's admission chain answers it.
//
// The plan (Plan, NewPlan) is read from a chart's rendering: the objects
// Helm creates, in Helm's order (pre hooks by weight, the release's
// objects in Helm's install order, post hooks), with the release's labels
// and annotations Helm sets; the hooks as Helm parsed them (their events
// and weights, chart.Object.Events and Weight, from release.Hook); the
// pods each workload's controller creates (PodOf).
//
// The answers are server-side dry runs sent through internal/dryrun
// (DryRunObjects, DryRunPods), each read into a Verdict: the refusal,
// parsed into the layer and policy that refused (ParseRefusal: the one
// Refusal type, internal/apply's too), the warnings, the object as
// admission changed it; what admission changed of a pod and which
// MutatingAdmissionPolicies match it (PodChanges, PodMutations, over
// internal/mapolicy); PodSecurity evaluated with the API server's own code
// for a namespace that does not exist yet (EvaluateLocally); the sums a
// ResourceQuota counts at each moment of the install (QuotaPhases,
// Exceeded); and the requests as the webhooks see them, judged with the
// API server's own matching (Requests, Judge, over internal/webhookmatch).
//
// The messages and hints are the checks': this package returns what it
// found, in types and in the few words a refusal or a change is quoted by.
package admission
