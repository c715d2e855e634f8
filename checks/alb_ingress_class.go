package checks

import "context"

// ALBIngressClassCheck passes when, for AWS ALB (the planned class is named
// alb or has the ALB controller), the IngressClass has spec.controller:
// ingress.k8s.aws/alb (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "AWS ALB ingress
// configuration" → "Controller configuration"). Other controllers: skip.
func ALBIngressClassCheck() Check {
	return Check{
		Meta: Meta{
			ID:       "alb-ingress-class",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryIngress,
			Modes:    ModePre,
			Title:    "ALB IngressClass has spec.controller ingress.k8s.aws/alb",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
			Applies:  Applies{Access: []AccessMode{AccessIngress}},
		},
		Run: runALBIngressClass,
	}
}

func runALBIngressClass(_ context.Context, env *Env) (Result, error) {
	ic, err := lookupIngress(env)
	if err != nil {
		return Result{}, err
	}
	isALB := ic.ClassName == "alb" || (ic.Class != nil && ic.Class.Controller == ControllerALB)
	if !isALB {
		return Skip("IngressClass %s is not an AWS ALB class", ic.ClassName), nil
	}
	hint := "kubectl apply -f - <<EOF\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: alb\nspec:\n  controller: ingress.k8s.aws/alb\nEOF"
	if ic.Class == nil {
		return Fail("IngressClass %s does not exist", ic.ClassName).WithHint(hint), nil
	}
	ref := ObjectRef{Kind: "IngressClass", Name: ic.Class.Name}
	if ic.Class.Controller != ControllerALB {
		return Fail("IngressClass %s has spec.controller %s, not %s", ic.Class.Name, ic.Class.Controller, ControllerALB).WithHint(hint).WithObjects(ref), nil
	}
	return Pass("IngressClass %s has spec.controller %s", ic.Class.Name, ControllerALB).WithObjects(ref), nil
}
