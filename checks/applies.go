package checks

import (
	"fmt"
	"slices"
	"strings"
)

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
	// (argo-cd.enabled=false).
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
	if a.ExistingArgoCD && !in.ExistingArgoCD {
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
