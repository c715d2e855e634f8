package run

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// Format 1 of a bundle recorded the command line: the flags that shaped
// the checks, as given (only those the user changed), the effective values
// (values.yaml, redacted; only when values were given) and the --waivers
// file. specOfFlags reads them into a Spec once, with the defaults the
// command had then, so that such a bundle replays as a recorded spec does.
// The flag names here are that format's, not the command's.

// format1Defaults are the values of the flags a format-1 bundle did not
// record: the command's defaults when it wrote them.
var format1Defaults = Spec{
	Version: SpecVersion, Mode: checks.ModePre.Phase(), Timeout: Duration(5 * time.Minute),
	Plan:   plan.Given{RuntimeName: plan.DefaultRuntimeName, Namespace: plan.DefaultNamespace, ReleaseName: plan.DefaultReleaseName, Chart: plan.DefaultChart},
	Output: Output{Format: "table"},
}

// specOfFlags reads the spec of a format-1 bundle: its recorded flags, its
// values.yaml (nil when it has none) and its waivers.yaml (nil when none).
// The error names the flag or the file at fault.
func specOfFlags(flags []bundle.Flag, values, waivers []byte) (Spec, error) {
	s := format1Defaults
	var waiversName string
	var post, upgrade bool
	for _, f := range flags {
		if len(f.Values) == 0 {
			continue
		}
		last := f.Values[len(f.Values)-1]
		if err := setFormat1Flag(&s, f.Name, f.Values, last, &post, &upgrade); err != nil {
			return Spec{}, fmt.Errorf("flag --%s %q: %w", f.Name, last, err)
		}
		if f.Name == "waivers" {
			waiversName = last
		}
	}
	switch {
	case upgrade:
		s.Mode = checks.ModeUpgrade.Phase()
	case post:
		s.Mode = checks.ModePost.Phase()
	}
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		return Spec{}, fmt.Errorf("internal error: %w", err)
	}
	mode, err := modeOf(s.Mode)
	if err != nil {
		return Spec{}, err
	}
	selected, err := reg.Select(mode, s.Only, s.Skip)
	if err != nil {
		return Spec{}, err
	}
	for _, c := range selected {
		if slices.Contains(checks.Format1Catalogue(mode), c.ID) {
			s.Checks = append(s.Checks, c.ID)
		}
	}
	// The plugins that wrote format 1 did not look for the Argo CD
	// Application that syncs the runtime: their bundles hold no answer.
	s.ArgoCD.Undetected = true
	if values != nil {
		if err := yaml.Unmarshal(values, &s.Plan.Values); err != nil {
			return Spec{}, fmt.Errorf("%s: %w", bundle.ValuesEntry, err)
		}
		if s.Plan.Values == nil {
			s.Plan.Values = map[string]any{}
		}
		s.Plan.ValuesGiven = true
	}
	if waivers != nil {
		if s.Waivers, err = ParseWaivers(waiversName, waivers, reg); err != nil {
			return Spec{}, err
		}
	}
	return s, nil
}

// setFormat1Flag sets what the recorded flag name (its values, the last of
// them last) said on s, and on post and upgrade. A name format 1 never
// recorded is left alone.
func setFormat1Flag(s *Spec, name string, values []string, last string, post, upgrade *bool) error {
	var err error
	p, sc := &s.Plan, &s.Plan.Shortcuts
	switch name {
	case "output":
		s.Output.Format = last
	case "no-color":
		s.Output.NoColor, err = strconv.ParseBool(last)
	case "only":
		s.Only = values
	case "skip":
		s.Skip = values
	case "fail-on":
		if last != "fail" && last != "error" && last != "warn" {
			return fmt.Errorf("want warn or fail")
		}
		s.FailOnWarn = last == "warn"
	case "post":
		*post, err = strconv.ParseBool(last)
	case "upgrade":
		*upgrade, err = strconv.ParseBool(last)
	case "reuse-values":
		s.Upgrade.Reuse, err = strconv.ParseBool(last)
	case "reset-values":
		s.Upgrade.Reset, err = strconv.ParseBool(last)
	case "reset-then-reuse-values":
		s.Upgrade.ResetThenReuse, err = strconv.ParseBool(last)
	case "helm-major":
		s.HelmMajor, err = strconv.Atoi(last)
	case "timeout":
		err = parseDuration(&s.Timeout, last)
	case "wait":
		err = parseDuration(&s.Wait, last)
	case "request-timeout":
		err = parseRequestTimeout(&s.Probes.RequestTimeout, last)
	case "connect-to":
		s.Probes.ConnectTo, err = parseConnectTo(values)
	case "runtime-name":
		p.RuntimeName = last
	case "release-name":
		p.ReleaseName = last
	case "namespace":
		p.Namespace, p.NamespaceExplicit = last, true
	case "chart":
		p.Chart = last
	case "chart-version":
		p.ChartVersion = last
	case "argocd-version-range":
		p.ArgoCDVersionRange = last
	case "access-mode":
		sc.AccessMode = last
	case "ingress-host":
		sc.IngressHost = last
	case "ingress-class":
		sc.IngressClass = last
	case "ingress-url":
		sc.IngressURL = last
	case "existing-argocd":
		sc.ExistingArgoCD, err = strconv.ParseBool(last)
	case "skip-ingress-validation":
		sc.SkipIngressValidation, err = strconv.ParseBool(last)
	}
	return err
}

// parseConnectTo reads --connect-to rules (probe.ParseConnectTo).
func parseConnectTo(values []string) ([]probe.ConnectTo, error) {
	rules := make([]probe.ConnectTo, 0, len(values))
	for _, v := range values {
		r, err := probe.ParseConnectTo(v)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// parseDuration reads a duration as pflag printed it ("5m0s").
func parseDuration(d *Duration, s string) error {
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// parseRequestTimeout reads kubectl's --request-timeout: "0" is none, a
// bare number is seconds.
func parseRequestTimeout(d *Duration, s string) error {
	if s == "" || s == "0" {
		*d = 0
		return nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		*d = Duration(time.Duration(n) * time.Second)
		return nil
	}
	return parseDuration(d, s)
}
