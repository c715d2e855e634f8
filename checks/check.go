package checks

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Status is the outcome of one check. Its JSON and text form is the lowercase
// word of the contract (README "Exit codes").
type Status string

// Statuses, from best to worst for reporting purposes.
const (
	StatusPass  Status = "pass"
	StatusWarn  Status = "warn"
	StatusFail  Status = "fail"
	StatusSkip  Status = "skip"
	StatusError Status = "error"
	// StatusWaived is a warn, fail or error that a valid waiver (--waivers)
	// covers: reported with the waiver's reason, it counts toward neither
	// the exit code nor the impact summary.
	StatusWaived Status = "waived"
)

// Statuses lists every status in summary order.
var Statuses = []Status{StatusPass, StatusWarn, StatusFail, StatusSkip, StatusError, StatusWaived}

// Failed reports whether s counts as a failure for the exit code (fail or error).
func (s Status) Failed() bool { return s == StatusFail || s == StatusError }

// Category groups checks in the catalogue (README "Checks").
type Category string

// Categories of the catalogue.
const (
	CategoryCluster        Category = "cluster"
	CategoryTools          Category = "tools"
	CategoryConflicts      Category = "conflicts"
	CategoryInputs         Category = "inputs"
	CategoryIngress        Category = "ingress"
	CategoryServiceMesh    Category = "service-mesh"
	CategoryTunnel         Category = "tunnel"
	CategoryExistingArgoCD Category = "existing-argocd"
	CategoryRuntime        Category = "runtime"
	// CategoryUpgrade: the deployed release against the target of `helm
	// upgrade` (--upgrade).
	CategoryUpgrade Category = "upgrade"
	// CategoryImages: the images the install pulls, from where, with which
	// credentials; CategoryEgress: what the runtime's pods must reach and
	// whether the proxy and NetworkPolicies let them.
	CategoryImages Category = "images"
	CategoryEgress Category = "egress"
)

// Mode says when a check runs: before the install (the default), after it
// (--post) or before `helm upgrade` of a deployed release (--upgrade). A
// check may run in several.
type Mode uint8

// Modes.
const (
	ModePre     Mode = 1 << iota // kubectl gitops-preflight
	ModePost                     // kubectl gitops-preflight --post
	ModeUpgrade                  // kubectl gitops-preflight --upgrade
)

// Has reports whether m includes o.
func (m Mode) Has(o Mode) bool { return m&o != 0 }

// Phase names the run a single mode is: "post-install", "upgrade" or
// "pre-install" (JUnit suite names, a bundle's manifest).
func (m Mode) Phase() string {
	switch m {
	case ModePost:
		return "post-install"
	case ModeUpgrade:
		return "upgrade"
	}
	return "pre-install"
}

// String returns "pre", "post", "upgrade" or several of them joined by
// commas ("pre,upgrade").
func (m Mode) String() string {
	var parts []string
	if m.Has(ModePre) {
		parts = append(parts, "pre")
	}
	if m.Has(ModePost) {
		parts = append(parts, "post")
	}
	if m.Has(ModeUpgrade) {
		parts = append(parts, "upgrade")
	}
	return strings.Join(parts, ",")
}

// Severity is the worst status a check's failure produces: SeverityFail for
// most checks, SeverityWarn for advisory checks (platform-reachable), whose
// `fail` results the runner reports as `warn`.
type Severity string

// Severities.
const (
	SeverityFail Severity = "fail"
	SeverityWarn Severity = "warn"
)

// DocsBase is where every check's documentation lives; a check's docs URL is
// DocsBase + "#" + its ID.
const DocsBase = "https://github.com/gitops-preflight/kubectl-gitops-preflight/blob/main/docs/checks.md"

// Meta is the static description of a check. It never depends on the cluster.
type Meta struct {
	// ID is stable, kebab-case and never reused (README "Checks").
	ID       string
	Category Category
	Modes    Mode
	// Title is the condition that passes, e.g. "Kubernetes version is 1.23 or newer".
	Title string
	// Severity is the status a failure of this check is reported as.
	Severity Severity
	// Requires lists IDs of checks that must pass (or warn) for this one to
	// run; when one of them is selected and ends otherwise, this check is
	// skipped with the reason. Prerequisites that are not selected are ignored:
	// a check reads what it needs from the snapshot itself.
	Requires []string
	// Fatal checks stop the run when they do not pass: every other check is
	// skipped and the exit code is 3 (cluster-reachable).
	Fatal bool
	// Fixable is true when `--fix` can repair a failure of this check.
	Fixable bool
	// Offline checks do not need the cluster and still run when it is unreachable.
	Offline bool
	// Applies is the check's applicability (access modes, --existing-argocd,
	// needed inputs), evaluated by the runner before the check runs; the
	// zero value applies to every install.
	Applies Applies
	// Impact is what a non-pass of this check means (docs/json.md,
	// "impact"): ImpactInstallFails when Helm will refuse the install,
	// ImpactRuntimeBreaks when it installs and the runtime then misbehaves,
	// ImpactAdvisory for advice. Every check sets it (NewRegistry refuses
	// one that does not).
	Impact Impact
	// Core checks are those without which a run verified nothing about its
	// subject (after the install: the release and its workloads). When every
	// core check of a run ends skip for lack of permission, the run fails
	// (README "Exit codes").
	Core bool
	// ReadsChart checks read the rendered chart; the chart is loaded and
	// rendered only when one of them is selected.
	ReadsChart bool
	// ReadsIgnoredValues checks read which of the user's values the chart
	// ignores (chart.Pending.Ignored: more renders of the chart); a run
	// starts deciding that beside its own render only when one of them is
	// selected.
	ReadsIgnoredValues bool
	// FixOptions are the names of the command's --fix options (flags) that
	// only this check's fix uses ("crds", "tls-secret"): one given while
	// this check is not selected is a usage error.
	FixOptions []string
	// ReplayDiffers, when set, says why a replay of a bundle may judge this
	// check differently from the live run it recorded (it reads a value the
	// bundle redacts); "" for a check whose replay equals its live run.
	ReplayDiffers string
}

// Docs returns the documentation URL of the check.
func (m Meta) Docs() string { return DocsBase + "#" + m.ID }

// ObjectRef names a Kubernetes object a result is about.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// Result is what a check's function returns.
type Result struct {
	Status Status
	// Message says what was found, in one line where possible.
	Message string
	// Hint says what to do about a warn or fail, with the exact command.
	Hint string
	// Objects are the objects the result is about (offending ones on failure).
	Objects []ObjectRef
	// Cause says why a skip that the runner decided was one: the check does
	// not apply, the credentials may not read what it needs, a prerequisite
	// did not pass, or the cluster was not reached. Empty for every other
	// result, a check's own skips among them.
	Cause SkipCause
	// Source, when set, is where the value that caused this result came
	// from: a values file's line, a flag, the chart's Chart.yaml (see
	// Env.Source). CI outputs anchor the finding there.
	Source *Source
	// Effect, when set, is this result's impact in place of Meta.Impact: a
	// check whose findings differ in impact (upgrade-deletes: data-loss or
	// runtime-breaks) says which this one has. The runner moves it into the
	// outcome's Meta.Impact.
	Effect Impact
	// Step, set by upgrade-path when the upgrade must go through an
	// intermediate chart line first, is that step: what a fleet's report
	// groups clusters by (a cluster that needs a step first). nil otherwise.
	Step *UpgradeStep
}

// UpgradeStep is a step of the chart's upgrade path an upgrade skips: from
// the deployed chart version From to the target To, the release line Via
// ("0.26") must come first.
type UpgradeStep struct {
	From, To, Via string
}

// String says the step: "chart 0.25.1 → 0.30.0 skips 0.26: upgrade to
// 0.26.x first".
func (s UpgradeStep) String() string {
	return fmt.Sprintf("chart %s → %s skips %s: upgrade to %s.x first", s.From, s.To, s.Via, s.Via)
}

// SkipCause is why the runner skipped a check (Result.Cause).
type SkipCause string

// Skip causes.
const (
	SkipNotApplicable SkipCause = "not-applicable"
	SkipForbidden     SkipCause = "forbidden"
	SkipPrerequisite  SkipCause = "prerequisite"
	SkipUnreachable   SkipCause = "unreachable"
)

// Pass, Warn, Fail and Skip build results; format and args are as fmt.Sprintf.
func Pass(format string, args ...any) Result {
	return Result{Status: StatusPass, Message: fmt.Sprintf(format, args...)}
}

// Warn returns a warn result.
func Warn(format string, args ...any) Result {
	return Result{Status: StatusWarn, Message: fmt.Sprintf(format, args...)}
}

// Fail returns a fail result.
func Fail(format string, args ...any) Result {
	return Result{Status: StatusFail, Message: fmt.Sprintf(format, args...)}
}

// Skip returns a skip result; the message says why.
func Skip(format string, args ...any) Result {
	return Result{Status: StatusSkip, Message: fmt.Sprintf(format, args...)}
}

// WithEffect returns r with its impact set to i (Result.Effect).
func (r Result) WithEffect(i Impact) Result {
	r.Effect = i
	return r
}

// WithStep returns r with the upgrade step it found (Result.Step).
func (r Result) WithStep(s UpgradeStep) Result {
	r.Step = &s
	return r
}

// WithHint returns r with its hint set.
func (r Result) WithHint(hint string) Result {
	r.Hint = hint
	return r
}

// WithObjects returns r with objects appended.
func (r Result) WithObjects(objs ...ObjectRef) Result {
	r.Objects = append(r.Objects, objs...)
	return r
}

// Func is a check's logic. It returns an error only when it could not decide
// (an API error); the runner records a Forbidden error as `skip` with the
// reason and any other error as `error`.
type Func func(ctx context.Context, env *Env) (Result, error)

// Check is one rule of the catalogue. Checks hold no state and are safe for
// concurrent use.
type Check struct {
	Meta
	Run Func
	// Plan, set on Fixable checks, plans the --fix for a failure.
	Plan Planner
}

// Applies is a check's applicability: which planned installs it concerns.
// The runner evaluates it (Applies.Reason) before it runs the check, so a
// check never opens with a guard of its own, and every check that does not
// apply ends `skip` with the same message form ("not applicable: ...").
// The zero value applies to every install.
//
// The run mode (before the install, or --post) is Meta.Modes: the registry
// selects by it (Registry.Select). Only what the inputs tell belongs here;
// what only the cluster can tell (no Istio CRD, not on AWS, the installed
// runtime's mode in a --post run) stays a run-time Skip in the check.
// The contract (README "Checks"): "Checks of an access mode other than the selected one end as
// `skip` with the reason."
type Applies struct {
	// Access lists the access modes (Inputs.AccessMode: tunnel, ingress,
	// service-mesh) of a pre-install run the check applies to; empty means
	// every mode. It is not evaluated in a --post run, whose mode the check
	// reads from the installed runtime (runtimeFacts).
	Access []AccessMode
	// ExistingArgoCD limits the check to installs with --existing-argocd
	// (argo-cd.enabled=false). In an --upgrade run the values the upgrade
	// renders with decide, which only the rendering knows (Helm reuses the
	// release's values when none is given; an umbrella chart nests them):
	// the check calls existingArgoCDGate.
	ExistingArgoCD bool
	// Needs lists the inputs the check cannot run without.
	Needs []Input
}

// Input names an input a check may need (Applies.Needs).
type Input string

// Inputs a check may need.
const (
	// InputValues: chart values were given (-f/--values, --set or a shortcut).
	InputValues Input = "values"
	// InputIngressHost: global.runtime.ingress.hosts[0] or --ingress-host.
	InputIngressHost Input = "ingress-host"
)

// inputs describes each Input: whether it is set and what its absence says.
var inputs = map[Input]struct {
	set     func(Inputs) bool
	missing string
}{
	InputValues: {
		set:     func(in Inputs) bool { return in.HasValues() },
		missing: "no values given: pass the -f/--values files and --set flags you will give helm install",
	},
	InputIngressHost: {
		set:     func(in Inputs) bool { return in.IngressHost != "" },
		missing: "no ingress host (global.runtime.ingress.hosts[0] or --ingress-host; see values)",
	},
}

// accessHow is how the user selects each access mode.
var accessHow = map[AccessMode]string{
	AccessTunnel:      "the chart's default, or --access-mode tunnel",
	AccessIngress:     "set global.runtime.ingress.enabled=true or --access-mode ingress",
	AccessServiceMesh: "set global.runtime.ingressUrl or --access-mode service-mesh",
}

// NotApplicable is the prefix of the message of every check the runner skips
// by its Applies.
const NotApplicable = "not applicable: "

// Reason returns why a check with this applicability and run modes does not
// apply to in ("" when it applies). The message begins with NotApplicable.
func (a Applies) Reason(modes, run Mode, in Inputs) string {
	if run == 0 {
		run = ModePre
	}
	switch {
	case modes.Has(run):
	case run == ModePost && modes.Has(ModeUpgrade):
		return NotApplicable + "runs before helm upgrade only (--upgrade)"
	case run == ModePost:
		return NotApplicable + "runs before the install only (not with --post)"
	case run == ModeUpgrade:
		return NotApplicable + "runs before the install or after it, not with --upgrade"
	case modes.Has(ModeUpgrade) && !modes.Has(ModePost):
		return NotApplicable + "runs before helm upgrade only (--upgrade)"
	default:
		return NotApplicable + "runs after the install only (--post)"
	}
	if len(a.Access) > 0 && run != ModePost && !slices.Contains(a.Access, in.AccessMode) {
		how := make([]string, len(a.Access))
		for i, m := range a.Access {
			how[i] = string(m)
			if h := accessHow[m]; h != "" {
				how[i] += " (" + h + ")"
			}
		}
		return fmt.Sprintf("%saccess mode is %s; this check is for %s", NotApplicable, in.AccessMode, strings.Join(how, " or "))
	}
	if a.ExistingArgoCD && !in.ExistingArgoCD && run != ModeUpgrade {
		return NotApplicable + "Argo CD is installed by the chart (argo-cd.enabled=true); this check is for --existing-argocd"
	}
	for _, n := range a.Needs {
		d, ok := inputs[n]
		if !ok {
			return fmt.Sprintf("%sneeds unknown input %q", NotApplicable, n)
		}
		if !d.set(in) {
			return NotApplicable + d.missing
		}
	}
	return ""
}
