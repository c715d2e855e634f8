package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MutatingPolicies are the cluster's MutatingAdmissionPolicies and their
// bindings (admissionregistration.k8s.io: v1 from Kubernetes 1.36, on by
// default; v1beta1 from 1.34 and v1alpha1 from 1.32 behind the
// MutatingAdmissionPolicy feature gate), read in the newest version the API
// server serves and held as v1 (the three versions have the same fields:
// https://github.com/kubernetes/api/blob/master/admissionregistration/v1/types.go).
type MutatingPolicies struct {
	// Served is false when the API server serves no version of them: no
	// policy of that kind can mutate anything.
	Served bool
	// Version is the version read ("v1", "v1beta1", "v1alpha1").
	Version  string
	Policies []admissionregistrationv1.MutatingAdmissionPolicy
	Bindings []admissionregistrationv1.MutatingAdmissionPolicyBinding
}

// mutatingPolicyVersions are the versions tried, newest first.
var mutatingPolicyVersions = []string{"v1", "v1beta1", "v1alpha1"}

// MutatingAdmissionPolicies lists the MutatingAdmissionPolicies and
// MutatingAdmissionPolicyBindings once per snapshot, in the newest version
// the discovery document (APIResources) says is served. Not served is no
// error (Served false); a forbidden list is a *ListError.
func (s *Snapshot) MutatingAdmissionPolicies() (*MutatingPolicies, error) {
	return Memo(s, "admission/mutatingpolicies", func() (*MutatingPolicies, error) {
		api, err := s.APIResources()
		if err != nil {
			return nil, err
		}
		for _, v := range mutatingPolicyVersions {
			gv := "admissionregistration.k8s.io/" + v
			_, _, policies := api.Resource(gv, "MutatingAdmissionPolicy")
			_, _, bindings := api.Resource(gv, "MutatingAdmissionPolicyBinding")
			if policies && bindings {
				return s.mutatingPolicies(v)
			}
		}
		return &MutatingPolicies{}, nil
	})
}

func (s *Snapshot) mutatingPolicies(version string) (*MutatingPolicies, error) {
	out := &MutatingPolicies{Served: true, Version: version}
	ar := s.clients.Kube
	var policyList, bindingList func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error)
	switch version {
	case "v1":
		policyList = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ar.AdmissionregistrationV1().MutatingAdmissionPolicies().List(ctx, o)
		}
		bindingList = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ar.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().List(ctx, o)
		}
	case "v1beta1":
		policyList = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ar.AdmissionregistrationV1beta1().MutatingAdmissionPolicies().List(ctx, o)
		}
		bindingList = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ar.AdmissionregistrationV1beta1().MutatingAdmissionPolicyBindings().List(ctx, o)
		}
	default:
		policyList = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ar.AdmissionregistrationV1alpha1().MutatingAdmissionPolicies().List(ctx, o)
		}
		bindingList = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ar.AdmissionregistrationV1alpha1().MutatingAdmissionPolicyBindings().List(ctx, o)
		}
	}
	err := each(s.ctx, "mutatingadmissionpolicies.admissionregistration.k8s.io", "", metav1.ListOptions{}, policyList, func(obj runtime.Object) error {
		var p admissionregistrationv1.MutatingAdmissionPolicy
		if err := asV1(obj, &p); err != nil {
			return err
		}
		out.Policies = append(out.Policies, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = each(s.ctx, "mutatingadmissionpolicybindings.admissionregistration.k8s.io", "", metav1.ListOptions{}, bindingList, func(obj runtime.Object) error {
		var b admissionregistrationv1.MutatingAdmissionPolicyBinding
		if err := asV1(obj, &b); err != nil {
			return err
		}
		out.Bindings = append(out.Bindings, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// asV1 reads a MutatingAdmissionPolicy or binding of any served version
// into its v1 type: the versions' JSON is the same.
func asV1(obj runtime.Object, into any) error {
	switch obj.(type) {
	case *admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding,
		*admissionregistrationv1beta1.MutatingAdmissionPolicy, *admissionregistrationv1beta1.MutatingAdmissionPolicyBinding,
		*admissionregistrationv1alpha1.MutatingAdmissionPolicy, *admissionregistrationv1alpha1.MutatingAdmissionPolicyBinding:
	default:
		return fmt.Errorf("unexpected %T in a MutatingAdmissionPolicy list", obj)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
