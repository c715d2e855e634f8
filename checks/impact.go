package checks

// Impact says what a check's non-pass means for the install (docs/json.md
// "impact"): Helm refuses it, Helm installs but the runtime then misbehaves,
// or it is advice.
type Impact string

// Impacts.
const (
	// ImpactInstallFails: `helm install` will fail (the chart refuses the
	// values, an object cannot be adopted, the credentials cannot create
	// what the chart renders, the validate-values hook fails).
	ImpactInstallFails Impact = "install-fails"
	// ImpactRuntimeBreaks: Helm installs, and the runtime then misbehaves
	// (stray Argo controllers, a documented prerequisite missing).
	ImpactRuntimeBreaks Impact = "runtime-breaks"
	// ImpactAdvisory: worth knowing; neither Helm nor the runtime fails
	// because of it (the checks whose severity is warn).
	ImpactAdvisory Impact = "advisory"
	// ImpactUpgradeFails: `helm upgrade` will fail (the release is not
	// upgradable, the API server refuses a change, the target chart does not
	// render with the effective values) or its pre-upgrade hook will.
	ImpactUpgradeFails Impact = "upgrade-fails"
	// ImpactDataLoss: `helm upgrade` succeeds and deletes what users made
	// (a CRD it no longer renders, and every custom resource of that kind).
	ImpactDataLoss Impact = "data-loss"
)

// Impacts lists every impact in summary order.
var Impacts = []Impact{ImpactInstallFails, ImpactUpgradeFails, ImpactRuntimeBreaks, ImpactDataLoss, ImpactAdvisory}

// upgradeOnly are the impacts only --upgrade reports; the summary of the
// other modes leaves them out.
var upgradeOnly = map[Impact]bool{ImpactUpgradeFails: true, ImpactDataLoss: true}

// An install-fails impact is Helm's ownership rule (pkg/action/validate.go),
// the chart's templates and its validate-values pre-install hook
// (https://codefresh.io/docs/gitops/gitops-runtimes/gitops-values-yaml-validation),
// the rights to create cluster-scoped objects, a reachable API server, the
// Helm client's version; each check says so in its Meta.Impact.

// known reports whether i is one of Impacts.
func (i Impact) known() bool {
	for _, k := range Impacts {
		if i == k {
			return true
		}
	}
	return false
}

// ImpactSummary counts the checks that did not pass (warn, fail or error)
// by impact; every impact of the report's mode is present (upgrade-fails and
// data-loss only with --upgrade).
func (r *Report) ImpactSummary() map[Impact]int {
	out := make(map[Impact]int, len(Impacts))
	for _, i := range r.Impacts() {
		out[i] = 0
	}
	for _, o := range r.Outcomes {
		if o.Status == StatusWarn || o.Status.Failed() {
			out[o.Impact]++
		}
	}
	return out
}

// Impacts returns the impacts of the report's mode, in summary order.
func (r *Report) Impacts() []Impact {
	var out []Impact
	for _, i := range Impacts {
		if !upgradeOnly[i] || r.Mode == ModeUpgrade {
			out = append(out, i)
		}
	}
	return out
}
