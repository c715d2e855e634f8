package checks

import (
	"context"
	"regexp"
)

// runtimeNamePattern: "it must start with a lower-case character, and can
// include up to 38 lower-case characters and numbers" (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Step 3: Install Hybrid GitOps Runtime", Runtime Name).
var runtimeNamePattern = regexp.MustCompile(`^[a-z][a-z0-9]{0,37}$`)

// RuntimeName passes when --runtime-name matches ^[a-z][a-z0-9]{0,37}$.
func RuntimeName() Check {
	return Check{
		Meta: Meta{
			ID:       "runtime-name",
			Impact:   ImpactInstallFails,
			Category: CategoryInputs,
			Modes:    ModePre,
			Title:    "Runtime name is valid",
			Severity: SeverityFail,
			Offline:  true,
		},
		Run: runRuntimeName,
	}
}

func runRuntimeName(_ context.Context, env *Env) (Result, error) {
	name := env.Inputs.RuntimeName
	if runtimeNamePattern.MatchString(name) {
		return Pass("%q", name), nil
	}
	why := "must start with a lower-case letter and contain only lower-case letters and digits"
	if len(name) > 38 {
		why = "is longer than 38 characters"
	} else if name == "" {
		why = "is empty"
	}
	return Fail("runtime name %q %s", name, why).
		WithHint("choose a name matching ^[a-z][a-z0-9]{0,37}$ and pass it as --runtime-name (global.runtime.name)").
		WithSource(env.runtimeNameSource()), nil
}
